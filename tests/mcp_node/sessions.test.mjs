// The session tools of `cordon mcp` (issue #41) driven by the official SDK client, over
// stdio and Streamable HTTP: a namespace session keeps the files one call writes for the
// next, its workspace is listed and read, and it is closed; over HTTP, a session belongs to
// the MCP session that opened it and ends with it. callTool validates every structuredContent
// against the tool's outputSchema, rendered from its template.
import assert from 'node:assert/strict';
import { describe, it, before, after } from 'node:test';

import { connectHttp, connectStdio, startHttpServer, textOf } from './support.mjs';

// Opens an sh session; its id.
async function open(client) {
  const r = await client.callTool({ name: 'session_open', arguments: { language: 'sh' } });
  assert.equal(r.isError ?? false, false, textOf(r));
  assert.match(r.structuredContent.session, /^[0-9a-f]{32}$/, '128 bits as hex');
  return r.structuredContent.session;
}

function run(client, session, code) {
  return client.callTool({ name: 'run_code', arguments: { code, session } });
}

describe('sessions over stdio', () => {
  let client;
  before(async () => {
    ({ client } = await connectStdio());
  });
  after(async () => client.close());

  it('lists the session tools, each with its output schema', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    assert.deepEqual(names, ['run_code', 'session_open', 'session_reset', 'session_close',
                             'session_files', 'session_read_file', 'session_write_file']);
    assert.equal(tools[0].inputSchema.properties.session.type, 'string');
    const openTool = tools.find((t) => t.name === 'session_open');
    assert.deepEqual(openTool.outputSchema.required, ['session']);
    assert.match(openTool.description, /files one call writes are there for the next/);
    assert.match(openTool.description, /ends after 10 min without a call, 1 h after/);
  });

  it('a file written in call 1 is read in call 2, listed, read, and gone with the session', async () => {
    const id = await open(client);
    const one = await run(client, id, 'echo "from call 1" > kept.txt; X=1');
    assert.equal(one.isError ?? false, false, textOf(one));
    assert.deepEqual(one.structuredContent.session, { id, call: 1 });
    const two = await run(client, id, 'cat kept.txt; echo "X=${X:-unset}"');
    assert.match(textOf(two), /from call 1/);
    assert.match(textOf(two), /X=unset/, 'shell variables do not persist');
    assert.equal(two.structuredContent.session.call, 2);

    const files = await client.callTool({ name: 'session_files', arguments: { session: id } });
    assert.ok(files.structuredContent.files.some((f) => f.path === 'kept.txt' && f.size === 12),
              JSON.stringify(files.structuredContent));
    const read = await client.callTool({
      name: 'session_read_file', arguments: { session: id, path: 'kept.txt' } });
    assert.equal(read.structuredContent.text, 'from call 1\n');
    const wrote = await client.callTool({
      name: 'session_write_file', arguments: { session: id, path: 'in/data.csv', text: 'a,b\n' } });
    assert.equal(wrote.isError ?? false, false, textOf(wrote));
    assert.match(textOf(await run(client, id, 'cat in/data.csv')), /a,b/);

    const closed = await client.callTool({ name: 'session_close', arguments: { session: id } });
    assert.equal(closed.isError ?? false, false, textOf(closed));
    const after = await run(client, id, 'true');
    assert.equal(after.isError, true);
    assert.match(textOf(after), /was closed/);
  });

  it('bad input is a clear tool error and loses nothing', async () => {
    const id = await open(client);
    const unknown = await run(client, 'f'.repeat(32), 'true');
    assert.equal(unknown.isError, true);
    assert.equal(textOf(unknown), 'no such session');
    const outside = await client.callTool({
      name: 'session_read_file', arguments: { session: id, path: '../../etc/passwd' } });
    assert.equal(outside.isError, true);
    assert.match(textOf(outside), /outside the workspace/);
    assert.equal((await run(client, id, 'true')).isError ?? false, false);
    await client.callTool({ name: 'session_close', arguments: { session: id } });
  });
});

describe('sessions over HTTP', () => {
  let server;
  before(async () => {
    // One session at most: a client's ended MCP session must free its place.
    server = await startHttpServer(['--max-sessions', '1']);
  });
  after(async () => server.stop());

  it("another client's id is no such session; ending the MCP session ends its sandboxes", async () => {
    const a = await connectHttp(server);
    const b = await connectHttp(server);
    try {
      const id = await open(a.client);
      assert.match(textOf(await run(a.client, id, 'echo mine > f; cat f')), /mine/);

      const stolen = await run(b.client, id, 'cat f');
      assert.equal(stolen.isError, true);
      assert.equal(textOf(stolen), 'no such session');
      const peek = await b.client.callTool({
        name: 'session_read_file', arguments: { session: id, path: 'f' } });
      assert.equal(textOf(peek), 'no such session');
      const full = await b.client.callTool({ name: 'session_open', arguments: {} });
      assert.equal(full.isError, true);
      assert.match(textOf(full), /--max-sessions/);

      await a.transport.terminateSession();  // DELETE: A's MCP session ends
      const mine = await open(b.client);     // its place is free again
      assert.notEqual(mine, id);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });
});
