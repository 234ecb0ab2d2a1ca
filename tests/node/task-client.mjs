// The official TypeScript SDK's client calling one tool through the console, printing what it meets as JSON lines.
//
//   node task-client.mjs URL TOKEN TOOL ARGUMENTS_JSON TIMEOUT_MS MODE
//
// MODE: "task" follows the call as a task (client.experimental.tasks.callToolStream) to its end and, should the
// task fail, collects its result too; "cancel" cancels the task once created; "plain" makes an ordinary call.
// TIMEOUT_MS is the client's timeout for each request it sends.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, token, tool, args, timeoutMs, mode] = process.argv.slice(2);
const print = (line) => process.stdout.write(JSON.stringify(line) + '\n');
const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } }
});
const client = new Client({ name: 'task-client', version: '1.0.0' });
const options = { timeout: Number(timeoutMs) };
await client.connect(transport);
await client.listTools();
print({ type: 'connected', capabilities: client.getServerCapabilities() });
const call = { name: tool, arguments: JSON.parse(args) };
try {
    if (mode === 'plain') {
        print({ type: 'result', result: await client.callTool(call, undefined, options) });
    } else {
        for await (const message of client.experimental.tasks.callToolStream(call, undefined, options)) {
            if (message.type === 'error') {
                print({ type: 'error', message: message.error.message });
            } else {
                print(message);
            }
            if (message.type === 'taskCreated' && mode === 'cancel') {
                print({ type: 'cancelled', task: await client.experimental.tasks.cancelTask(message.task.taskId) });
                break;
            }
            if (message.type === 'taskStatus' && message.task.status === 'failed') {
                const result = await client.experimental.tasks.getTaskResult(message.task.taskId, CallToolResultSchema, options);
                print({ type: 'failedResult', result });
            }
        }
    }
} catch (error) {
    print({ type: 'error', message: String(error.message ?? error) });
}
await client.close();
