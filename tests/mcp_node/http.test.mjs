// `cordon mcp --http` (Streamable HTTP), driven by the SDK's StreamableHTTPClientTransport,
// and its security rules checked with raw requests: token, Origin, body size, sessions.
import assert from 'node:assert/strict';
import { describe, it, before, after } from 'node:test';

import {
  SUPPORTED_PROTOCOL_VERSIONS,
  connectHttp,
  hasStructured,
  marker,
  pidsWith,
  startHttpServer,
  textOf,
  waitUntil,
} from './support.mjs';

const initialize = (version = '2025-06-18') => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: version,
    capabilities: {},
    clientInfo: { name: 'raw-http-test', version: '0' },
  },
});

describe('cordon mcp --http', () => {
  let server;
  before(async () => {
    server = await startHttpServer();
  });
  after(async () => server.stop());

  const post = (body, headers = {}) =>
    fetch(server.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${server.token}`,
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  // Versions the HTTP transport exists in (Streamable HTTP came with 2025-03-26).
  for (const version of SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v >= '2025-03-26')) {
    it(`the SDK client: initialize, tools/list, a call at ${version}`, async () => {
      const { client, transport } = await connectHttp(server, { version });
      try {
        assert.ok(transport.sessionId, 'a session id');
        const { tools } = await client.listTools();
        const props = tools[0].inputSchema.properties;
        const r = await client.callTool({
          name: 'run_code',
          arguments: { code: 'print("over http")', language: 'python', timeout: null,
                       ...(props.files ? { files: null } : {}),
                       ...(props.collect ? { collect: null } : {}) },
        });
        assert.equal(r.isError ?? false, false, textOf(r));
        assert.match(textOf(r), /over http/);
        assert.equal('structuredContent' in r, hasStructured(version));
        await transport.terminateSession();
      } finally {
        await client.close();
      }
    });
  }

  it('progress and cancellation over HTTP', async () => {
    const { client } = await connectHttp(server);
    try {
      const { tools } = await client.listTools();
      const props = tools[0].inputSchema.properties;
      const extra = { ...(props.files ? { files: null } : {}),
                      ...(props.collect ? { collect: null } : {}) };
      const seen = [];
      const r = await client.callTool(
        { name: 'run_code', arguments: { code: 'sleep 1.2', language: 'sh', timeout: null, ...extra } },
        undefined,
        { onprogress: (p) => seen.push(p) },
      );
      assert.equal(r.isError ?? false, false);
      assert.ok(seen.length >= 2, `progress notifications: ${seen.length}`);

      const mark = marker('http-cancel');
      const abort = new AbortController();
      const call = client.callTool(
        { name: 'run_code', arguments: { code: `exec -a ${mark} sleep 30`, language: 'bash', timeout: 9, ...extra } },
        undefined,
        { signal: abort.signal },
      );
      await waitUntil(() => pidsWith(mark).length > 0, 5000, 'the call started');
      abort.abort();
      await assert.rejects(call);
      await waitUntil(() => pidsWith(mark).length === 0, 5000, 'the run stopped');
    } finally {
      await client.close();
    }
  });

  it('no token, or a wrong one: 401', async () => {
    assert.equal((await post(initialize(), { Authorization: '' })).status, 401);
    assert.equal((await post(initialize(), { Authorization: 'Bearer wrong' })).status, 401);
  });

  it('a foreign Origin: 403', async () => {
    assert.equal((await post(initialize(), { Origin: 'http://evil.example' })).status, 403);
  });

  it('an oversized body: 413', async () => {
    const big = JSON.stringify({ ...initialize(), pad: 'x'.repeat(5 << 20) });
    assert.equal((await post(big)).status, 413);
  });

  it('a session id the server never gave, or from another session that ended: refused', async () => {
    const init = await post(initialize());
    assert.equal(init.status, 200);
    const id = init.headers.get('mcp-session-id');
    assert.ok(id);
    await init.text();
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    const ok = await post(ping, { 'Mcp-Session-Id': id, 'MCP-Protocol-Version': '2025-06-18' });
    assert.equal(ok.status, 200);
    await ok.text();
    assert.equal((await post(ping, { 'Mcp-Session-Id': 'f'.repeat(32) })).status, 404);
    const del = await fetch(server.url, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${server.token}`, 'Mcp-Session-Id': id },
    });
    assert.ok(del.status === 200 || del.status === 204, `DELETE: ${del.status}`);
    assert.equal((await post(ping, { 'Mcp-Session-Id': id })).status, 404);
  });
});
