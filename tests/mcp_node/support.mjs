// What the SDK tests share: where the cordon binary is, how to start `cordon mcp` through
// the SDK's own transports, and how to look for processes a test left behind.
import { spawn, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

export { Client, SUPPORTED_PROTOCOL_VERSIONS };

// CTest passes the binary; run by hand, the dev build's.
export const cordonBin =
  process.env.CORDON_BIN ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../build/dev/bin/cordon');

// The options every server of these tests runs with: the namespace backend (CI is root),
// no audit and unproven claims rendered as such (as `cordon prompt --no-audit --unverified`;
// the audit has its own CTest), a memory limit
// a test can hit, and a timeout ceiling the timeout test stays under.
export const serverArgs = [
  'mcp', '-b', 'namespace', '--no-audit', '--unverified', '-t', '10s', '--memory', '128M',
];

// A marker no other process carries: a test's code sleeps under it so the test can tell
// whether anything of that run survived.
export function marker(name) {
  return `cordon-sdk-${name}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}

// Pids whose command line contains `text` (excluding this process and pgrep itself).
export function pidsWith(text) {
  try {
    return execFileSync('pgrep', ['-f', text], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim() !== '' && Number(line) !== process.pid);
  } catch {
    return [];  // pgrep exits 1 when nothing matches
  }
}

// Whether `pid` has ended: gone, or a zombie (an orphan's zombie may never be reaped here:
// this machine kind's PID 1 does not reap).
export function exited(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

export async function waitUntil(predicate, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not within ${ms} ms: ${what}`);
}

// A transport wrapper that asks for `version` in initialize instead of the SDK's latest:
// the SDK client accepts any version it lists as supported, so each one can be tested
// with the SDK's own client, schemas and result validation.
export function withProtocolVersion(transport, version) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === 'initialize') {
      message = { ...message, params: { ...message.params, protocolVersion: version } };
    }
    return send(message, options);
  };
  return transport;
}

export function stdioTransport(extraArgs = []) {
  return new StdioClientTransport({
    command: cordonBin,
    args: [...serverArgs, ...extraArgs],
    stderr: 'pipe',
    env: { ...process.env },
  });
}

// Connects an SDK client over stdio; `version` picks the protocol version asked for.
export async function connectStdio({ version, extraArgs = [] } = {}) {
  let transport = stdioTransport(extraArgs);
  if (version) transport = withProtocolVersion(transport, version);
  const client = new Client({ name: 'cordon-sdk-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

// Starts `cordon mcp --http 127.0.0.1:0` and waits for its "listening on URL" line.
export async function startHttpServer(extraArgs = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-sdk-http-'));
  const tokenFile = path.join(dir, 'token');
  fs.writeFileSync(tokenFile, 'sdk-test-token-' + Math.random().toString(36).slice(2), {
    mode: 0o600,
  });
  const token = fs.readFileSync(tokenFile, 'utf8').trim();
  const child = spawn(
    cordonBin,
    [...serverArgs, '--http', '127.0.0.1:0', '--token-file', tokenFile, ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${stderr}`)), 20000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${stderr}`)));
  });
  return {
    url,
    token,
    child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function connectHttp(server, { version, token = server.token } = {}) {
  let transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  if (version) transport = withProtocolVersion(transport, version);
  const client = new Client({ name: 'cordon-sdk-http-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

// The text item a model reads.
export function textOf(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// Whether `version` carries structuredContent and outputSchema (added in 2025-06-18).
export function hasStructured(version) {
  return version >= '2025-06-18';
}
