// Holds one long call open for stdio.test.mjs's "client killed mid-call" case: connects,
// prints the server's pid, starts `sleep 30` under the marker given as argv[2], and waits
// to be SIGKILLed.
import { connectStdio } from './support.mjs';

const mark = process.argv[2];
const { client, transport } = await connectStdio();
process.stdout.write(`server-pid ${transport.pid}\n`);
const { tools } = await client.listTools();
const props = tools[0].inputSchema.properties;
client
  .callTool({
    name: 'run_code',
    arguments: {
      code: `exec -a ${mark} sleep 30`,
      language: 'bash',
      timeout: 9,
      ...(props.files ? { files: null } : {}),
      ...(props.collect ? { collect: null } : {}),
    },
  })
  .catch(() => {});
await new Promise(() => {});  // until killed
