// The official JS SDK's client (@a2a-js/sdk) running one scenario against an A2A agent.
//   node client.mjs BASE_URL TRANSPORT [VERSION [HOOK]]   (TRANSPORT: JSONRPC, HTTP+JSON or GRPC; VERSION:
//   1.0, the default, through ClientFactory, or 0.3 through the SDK's compat/v0_3 transports;
//   HOOK: a webhook URL given with a message, for push delivery)
// Prints one JSON object: for each step, {ok: true, value} or {ok: false, error}. The agent is
// expected to behave like tests/support/agents.py's TestAgent (echo, steps N, ask, slow).
import { randomUUID } from 'node:crypto';
import { Role, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { Client, ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { LegacyJsonRpcTransport, LegacyRestTransport, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { LegacyGrpcTransport } from '@a2a-js/sdk/compat/v0_3/client/grpc';
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

// Requests carry every field the SDK's types require: its JSON transports tolerate missing
// ones, but its gRPC transport encodes with ts-proto, which fails on a missing repeated field
// ("message.extensions is not iterable") or number.
function message(text, extra = {}) {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}
const send = (msg, configuration = undefined) => ({ tenant: '', message: msg, configuration, metadata: undefined });
const byId = (id) => ({ tenant: '', id, metadata: undefined });
const configuration = (fields) => ({
  acceptedOutputModes: [],
  taskPushNotificationConfig: undefined,
  returnImmediately: false,
  ...fields,
});

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
  const Transport = { JSONRPC: LegacyJsonRpcTransport, 'HTTP+JSON': LegacyRestTransport, GRPC: LegacyGrpcTransport }[
    transport
  ];
  return new Client(new Transport({ endpoint: entry.url }), card);
}
const factory = new ClientFactory({
  transports: [new JsonRpcTransportFactory(), new RestTransportFactory(), new GrpcTransportFactory()],
  preferredTransports: [transport],
});
const client = await step('card', () => (version === '0.3' ? legacyClient() : factory.createFromUrl(base)));
if (!client) {
  console.log(JSON.stringify(results));
  process.exit(0);
}
results.card.value = { transport: client.transport.protocolName, version: client.protocolVersion };

// SCENARIO=rate_limit: against an agent allowing one running task per caller, a second message
// while the first runs is refused (our RateLimitError); then the first is canceled.
if (process.env.SCENARIO === 'rate_limit') {
  const held = await step('held', async () =>
    summary(await client.sendMessage(send(message('slow'), configuration({ returnImmediately: true })))),
  );
  await step('refused', async () =>
    summary(await client.sendMessage(send(message('slow'), configuration({ returnImmediately: true })))),
  );
  await step('cancel_held', async () => summary(await client.cancelTask(byId(held?.id))));
  console.log(JSON.stringify(results));
  process.exit(0);
}

const echo = await step('send', async () => summary(await client.sendMessage(send(message('echo hi')))));
await step('stream', () => collect(client.sendMessageStream(send(message('steps 3')))));
await step('get', async () => summary(await client.getTask(byId(echo?.id))));
await step('list', async () => {
  const page = await client.listTasks({
    // ts-proto's toJSON writes every enum field: the status filter must be given (UNSPECIFIED: none)
    tenant: '',
    contextId: echo?.contextId,
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageToken: '',
    statusTimestampAfter: undefined,
  });
  return page.tasks.map((t) => t.id);
});
const asked = await step('ask', async () => summary(await client.sendMessage(send(message('ask')))));
await step('follow_up', async () =>
  summary(await client.sendMessage(send(message('ask large', { taskId: asked?.id, contextId: asked?.contextId })))),
);
const slow = await step('slow', async () =>
  summary(await client.sendMessage(send(message('slow'), configuration({ returnImmediately: true })))),
);
// SubscribeToTask while the task runs, then CancelTask: the stream ends with the canceled state.
let subscribed = null;
await step('subscribe_started', async () => {
  subscribed = collect(client.resubscribeTask(byId(slow?.id)));
  subscribed.catch(() => {}); // awaited by the 'subscribe' step; no unhandled rejection before it
  await new Promise((r) => setTimeout(r, 300));
  return true;
});
await step('cancel', async () => summary(await client.cancelTask(byId(slow?.id))));
await step('subscribe', () => subscribed);
await step('subscribe_finished', () => collect(client.resubscribeTask(byId(echo?.id))));
const config = { tenant: '', taskId: slow?.id, id: 'cfg-1', url: 'http://127.0.0.1:9/hook', token: 't0k', authentication: undefined };
await step('push_create', async () => {
  const made = await client.createTaskPushNotificationConfig(config);
  return { id: made.id, taskId: made.taskId, url: made.url, token: made.token };
});
await step('push_get', async () => {
  const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: slow?.id, id: 'cfg-1' });
  return { id: got.id, url: got.url };
});
await step('push_list', async () => {
  const page = await client.listTaskPushNotificationConfig({ tenant: '', taskId: slow?.id, pageSize: 0, pageToken: '' });
  return page.configs.map((c) => c.id);
});
await step('push_delete', async () => {
  await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: slow?.id, id: 'cfg-1' });
  const page = await client.listTaskPushNotificationConfig({ tenant: '', taskId: slow?.id, pageSize: 0, pageToken: '' });
  return page.configs.map((c) => c.id);
});
await step('get_missing', () => client.getTask(byId('no-such-task')));
await step('cancel_missing', () => client.cancelTask(byId('no-such-task')));
await step('subscribe_missing', () => collect(client.resubscribeTask(byId('no-such-task'))));
if (hook) {
  await step('push_delivery', async () => {
    const push = { tenant: '', id: 'hook-1', taskId: '', url: hook, token: 'hook-tok', authentication: undefined };
    return summary(await client.sendMessage(send(message('echo pushed'), configuration({ taskPushNotificationConfig: push }))));
  });
}
console.log(JSON.stringify(results));
