// The official JS SDK's client (@a2a-js/sdk) running one scenario against an A2A agent.
//   node client.mjs BASE_URL TRANSPORT [VERSION [HOOK]]   (TRANSPORT: JSONRPC or HTTP+JSON; VERSION:
//   1.0, the default, through ClientFactory, or 0.3 through the SDK's compat/v0_3 transports;
//   HOOK: a webhook URL given with a message, for push delivery)
// Prints one JSON object: for each step, {ok: true, value} or {ok: false, error}. The agent is
// expected to behave like tests/support/agents.py's TestAgent (echo, steps N, ask, slow).
import { randomUUID } from 'node:crypto';
import { Role, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { Client, ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport, LegacyRestTransport, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { A2AError, TaskNotFoundError } from '@a2a-js/sdk/errors';

const [base, transport, version = '1.0', hook] = process.argv.slice(2);
const results = {};

function describeError(e) {
  return {
    name: e?.constructor?.name,
    message: String(e?.message ?? e),
    typed: e instanceof A2AError,
    taskNotFound: e instanceof TaskNotFoundError,
    reason: e?.reason,
    code: e?.code,
  };
}

async function step(name, fn) {
  try {
    results[name] = { ok: true, value: await fn() };
  } catch (e) {
    results[name] = { ok: false, error: describeError(e) };
  }
  return results[name].value;
}

function message(text, extra = {}) {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text } }],
    ...extra,
  };
}

const state = (task) => taskStateToJSON(task?.status?.state);
const textOf = (parts) => (parts ?? []).map((p) => p.content?.value ?? '').join('');
const summary = (task) => ({
  kind: task.status ? 'task' : 'message',
  id: task.id,
  contextId: task.contextId,
  state: task.status ? state(task) : undefined,
  artifacts: (task.artifacts ?? []).map((a) => textOf(a.parts)),
  statusText: textOf(task.status?.message?.parts),
});
const event = (e) => {
  const { $case, value } = e.payload ?? {};
  if ($case === 'statusUpdate') return { kind: $case, state: state(value) };
  if ($case === 'artifactUpdate') return { kind: $case, text: textOf(value.artifact?.parts) };
  if ($case === 'task') return { kind: $case, state: state(value) };
  return { kind: $case };
};
async function collect(stream) {
  const events = [];
  for await (const e of stream) events.push(event(e));
  return events;
}

// 0.3: the card's url and preferredTransport, or additionalInterfaces (0.3 §5.6), pick the
// endpoint; the 0.3 card is parsed by the SDK's own legacy card parser.
async function legacyClient() {
  const raw = await (await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '0.3' } })).json();
  const card = parseLegacyAgentCard(raw);
  const entry = [{ url: raw.url, transport: raw.preferredTransport }, ...(raw.additionalInterfaces ?? [])].find(
    (i) => i.transport === transport,
  );
  const Transport = transport === 'JSONRPC' ? LegacyJsonRpcTransport : LegacyRestTransport;
  return new Client(new Transport({ endpoint: entry.url }), card);
}
const factory = new ClientFactory({
  transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
  preferredTransports: [transport],
});
const client = await step('card', () => (version === '0.3' ? legacyClient() : factory.createFromUrl(base)));
if (!client) {
  console.log(JSON.stringify(results));
  process.exit(0);
}
results.card.value = { transport: client.transport.protocolName, version: client.protocolVersion };

const echo = await step('send', async () => summary(await client.sendMessage({ message: message('echo hi') })));
await step('stream', () => collect(client.sendMessageStream({ message: message('steps 3') })));
await step('get', async () => summary(await client.getTask({ id: echo?.id })));
await step('list', async () => {
  const page = await client.listTasks({
    // ts-proto's toJSON writes every enum field: the status filter must be given (UNSPECIFIED: none)
    contextId: echo?.contextId,
    status: TaskState.TASK_STATE_UNSPECIFIED,
  });
  return page.tasks.map((t) => t.id);
});
const asked = await step('ask', async () => summary(await client.sendMessage({ message: message('ask') })));
await step('follow_up', async () =>
  summary(await client.sendMessage({ message: message('ask large', { taskId: asked?.id, contextId: asked?.contextId }) })),
);
const slow = await step('slow', async () =>
  summary(await client.sendMessage({ message: message('slow'), configuration: { returnImmediately: true } })),
);
// SubscribeToTask while the task runs, then CancelTask: the stream ends with the canceled state.
let subscribed = null;
await step('subscribe_started', async () => {
  subscribed = collect(client.resubscribeTask({ id: slow?.id }));
  await new Promise((r) => setTimeout(r, 300));
  return true;
});
await step('cancel', async () => summary(await client.cancelTask({ id: slow?.id })));
await step('subscribe', () => subscribed);
await step('subscribe_finished', () => collect(client.resubscribeTask({ id: echo?.id })));
const config = { taskId: slow?.id, id: 'cfg-1', url: 'http://127.0.0.1:9/hook', token: 't0k' };
await step('push_create', async () => {
  const made = await client.createTaskPushNotificationConfig(config);
  return { id: made.id, taskId: made.taskId, url: made.url, token: made.token };
});
await step('push_get', async () => {
  const got = await client.getTaskPushNotificationConfig({ taskId: slow?.id, id: 'cfg-1' });
  return { id: got.id, url: got.url };
});
await step('push_list', async () => {
  const page = await client.listTaskPushNotificationConfig({ taskId: slow?.id });
  return page.configs.map((c) => c.id);
});
await step('push_delete', async () => {
  await client.deleteTaskPushNotificationConfig({ taskId: slow?.id, id: 'cfg-1' });
  const page = await client.listTaskPushNotificationConfig({ taskId: slow?.id });
  return page.configs.map((c) => c.id);
});
await step('get_missing', () => client.getTask({ id: 'no-such-task' }));
await step('cancel_missing', () => client.cancelTask({ id: 'no-such-task' }));
await step('subscribe_missing', () => collect(client.resubscribeTask({ id: 'no-such-task' })));
if (hook) {
  await step('push_delivery', async () => {
    const push = { tenant: '', id: 'hook-1', taskId: '', url: hook, token: 'hook-tok', authentication: undefined };
    const configuration = { acceptedOutputModes: [], taskPushNotificationConfig: push, returnImmediately: false };
    return summary(await client.sendMessage({ message: message('echo pushed'), configuration }));
  });
}
console.log(JSON.stringify(results));
