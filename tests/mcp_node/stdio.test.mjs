// `cordon mcp` over stdio, driven by the official SDK's Client and StdioClientTransport.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { describe, it, before, after } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
  SUPPORTED_PROTOCOL_VERSIONS,
  connectStdio,
  cordonBin,
  hasStructured,
  exited,
  marker,
  pidsWith,
  serverArgs,
  textOf,
  waitUntil,
} from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

describe('every protocol version the SDK supports', () => {
  for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`initialize, tools/list and a call at ${version}`, async () => {
      const { client } = await connectStdio({ version });
      try {
        assert.equal(client.getServerVersion().name, 'cordon');
        // listTools validates the answer with the SDK's own schemas.
        const { tools } = await client.listTools();
        // run_code first; the namespace backend holds sessions, so the session tools follow
        // (issue #41; tests in sessions.test.mjs).
        const [tool] = tools;
        assert.ok(tools.some((t) => t.name === 'session_open'), 'session_open listed');
        assert.equal(tool.name, 'run_code');
        assert.equal(tool.inputSchema.type, 'object');
        assert.equal('outputSchema' in tool, hasStructured(version), 'outputSchema');
        // callTool validates structuredContent against the outputSchema where there is one.
        const result = await client.callTool({
          name: 'run_code',
          arguments: { code: 'echo hello from $0', language: 'sh', timeout: null,
                       ...(tool.inputSchema.properties.files ? { files: null } : {}),
                       ...(tool.inputSchema.properties.collect ? { collect: null } : {}) },
        });
        assert.equal(result.isError ?? false, false, textOf(result));
        assert.match(textOf(result), /hello from/);
        assert.equal('structuredContent' in result, hasStructured(version), 'structuredContent');
        if (hasStructured(version)) {
          assert.equal(result.structuredContent.outcome, 'ok');
          assert.match(result.structuredContent.stdout, /hello from/);
        }
      } finally {
        await client.close();
      }
    });
  }
});

describe('outcomes', () => {
  let client;
  let tool;
  before(async () => {
    ({ client } = await connectStdio());
    [tool] = (await client.listTools()).tools;
  });
  after(async () => client.close());

  // Every field, null where unused, as a model shown OpenAI's strict shape fills them (null
  // and left out mean the same; the tests below leave them out).
  const args = (code, language = 'sh', timeout = null) => ({
    code,
    language,
    timeout,
    ...(tool.inputSchema.properties.files ? { files: null } : {}),
    ...(tool.inputSchema.properties.collect ? { collect: null } : {}),
  });

  it('the tool is the one `cordon prompt --format mcp` renders', () => {
    const printed = JSON.parse(
      // The same backend, limits and audit choice as the server (serverArgs minus 'mcp').
      // --sessions: as served where the backend holds sessions (run_code's `session`).
      execFileSync(cordonBin, ['prompt', '--format', 'mcp', '--sessions', ...serverArgs.slice(1)], {
        encoding: 'utf8',
      }),
    );
    assert.equal(tool.description, printed.description);
    assert.deepEqual(tool.inputSchema, printed.inputSchema);
    assert.deepEqual(tool.outputSchema, printed.outputSchema);
    assert.deepEqual(tool.annotations, printed.annotations);
  });

  // What a model writes first (issue #40): the program alone. Only `code` is required, and
  // the language left out is the stated default, python where the backend runs it.
  it('the code alone is a call', async () => {
    assert.deepEqual(tool.inputSchema.required, ['code']);
    assert.equal(tool.inputSchema.properties.language.default, 'python');
    const r = await client.callTool({
      name: 'run_code',
      arguments: { code: 'import sys\nprint(6*7, sys.version_info[0])' },
    });
    assert.equal(r.isError ?? false, false, textOf(r));
    assert.match(textOf(r), /42 3/);
    assert.equal(r.structuredContent.outcome, 'ok');
  });

  it('each optional field left out in turn', async () => {
    const full = {
      code: "import os\nprint('in:', open('in.txt').read() if os.path.exists('in.txt') else None)\n" +
            "open('out.txt', 'w').write('made')\n",
      language: 'python',
      timeout: 5,
      files: [{ name: 'in.txt', content_base64: Buffer.from('hi').toString('base64') }],
      collect: ['out.txt'],
    };
    const resources = (r) => r.content.filter((c) => c.type === 'resource');
    for (const name of ['language', 'timeout', 'files', 'collect']) {
      const { [name]: _, ...call } = full;
      const r = await client.callTool({ name: 'run_code', arguments: call });
      assert.equal(r.isError ?? false, false, `${name} left out: ${textOf(r)}`);
      assert.match(textOf(r), name === 'files' ? /in: None/ : /in: hi/, name);
      assert.equal(resources(r).length, name === 'collect' ? 0 : 1, name);
    }
  });

  it('ok', async () => {
    const r = await client.callTool({ name: 'run_code', arguments: args('print(6*7)', 'python') });
    assert.equal(r.isError ?? false, false);
    assert.match(textOf(r), /42/);
    assert.equal(r.structuredContent.exit_code, 0);
  });

  it('failed: exit 3 is an error the model reads', async () => {
    const r = await client.callTool({ name: 'run_code', arguments: args('echo oops >&2; exit 3') });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /3/);
    assert.match(textOf(r), /oops/);
    assert.equal(r.structuredContent.outcome, 'failed');
    assert.equal(r.structuredContent.exit_code, 3);
  });

  it('timed out', async () => {
    const started = Date.now();
    const r = await client.callTool({ name: 'run_code', arguments: args('sleep 30', 'sh', 0.3) });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.outcome, 'timed_out');
    assert.match(textOf(r), /timed out/);
    assert.ok(Date.now() - started < 5000, 'a 0.3 s timeout returns promptly');
  });

  it('over the memory limit', async () => {
    const r = await client.callTool({
      name: 'run_code',
      arguments: args('x = bytearray(512 * 1024 * 1024)\nprint(len(x))', 'python'),
    });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.outcome, 'limit_exceeded');
    assert.match(textOf(r), /memory/);
  });

  it('bad arguments: an error result naming the field', async () => {
    const r = await client.callTool({
      name: 'run_code',
      arguments: { ...args('true'), language: 'cobol' },
    });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /language/);
  });

  it('cancelled: the request is withdrawn and every process of it stops', async () => {
    const mark = marker('cancel');
    const abort = new AbortController();
    const call = client.callTool(
      { name: 'run_code', arguments: args(`exec -a ${mark} sleep 30`, 'bash', 9) },
      undefined,
      { signal: abort.signal },
    );
    await waitUntil(() => pidsWith(mark).length > 0, 5000, 'the call started');
    abort.abort();
    await assert.rejects(call);
    await waitUntil(() => pidsWith(mark).length === 0, 5000, 'the run stopped');
  });

  it('progress at least every 500 ms', async () => {
    const seen = [];
    const r = await client.callTool(
      { name: 'run_code', arguments: args('echo a; sleep 1.6; echo b') },
      undefined,
      { onprogress: (p) => seen.push({ at: Date.now(), ...p }) },
    );
    assert.equal(r.isError ?? false, false);
    assert.ok(seen.length >= 3, `progress notifications: ${seen.length}`);
    for (let i = 1; i < seen.length; ++i) assert.ok(seen[i].progress > seen[i - 1].progress);
  });

  it('8 calls in flight at once', async () => {
    const calls = [];
    for (let i = 0; i < 8; ++i) {
      calls.push(client.callTool({ name: 'run_code', arguments: args(`sleep 0.3; echo call ${i}`) }));
    }
    const results = await Promise.all(calls);
    results.forEach((r, i) => {
      assert.equal(r.isError ?? false, false, textOf(r));
      assert.match(textOf(r), new RegExp(`call ${i}\\b`));
    });
  });
});

describe('a client killed mid-call', () => {
  it('leaves nothing behind', async () => {
    const mark = marker('killed');
    // A separate node process holds the client (and so the server's stdin); SIGKILL it.
    const holder = spawn(process.execPath, [path.join(here, 'hold_call.mjs'), mark], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env },
    });
    let out = '';
    holder.stdout.on('data', (c) => { out += c; });
    await waitUntil(() => out.includes('server-pid') && pidsWith(mark).length > 0, 10000,
                    'the held call started');
    const serverPid = Number(/server-pid (\d+)/.exec(out)[1]);
    holder.kill('SIGKILL');
    await once(holder, 'exit');
    // The server sees its stdin close, cancels the call and exits.
    await waitUntil(() => pidsWith(mark).length === 0, 5000, 'the run stopped');
    await waitUntil(() => exited(serverPid), 5000, 'the server exited');
  });
});
