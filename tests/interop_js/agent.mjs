// An A2A agent built from the official JS SDK's server pieces (@a2a-js/sdk/server, Express).
//   node agent.mjs PORT [legacy] [GRPC_PORT]   (legacy: the SDK's v0.3 compat layer on every
//   route; GRPC_PORT: also gRPC on 127.0.0.1, lf.a2a.v1 and, with legacy, a2a.v1)
// Card at /.well-known/agent-card.json; JSON-RPC at /a2a/jsonrpc, HTTP+JSON at /a2a/rest.
// The executor behaves like tests/support/agents.py's TestAgent, on the first word of the text:
// "slow" works until canceled (or 10 s), "steps N" streams N artifact chunks, "ask" requires
// input then completes on the follow-up, "reply" answers a direct Message, else "echo: <text>".
import { randomUUID } from 'node:crypto';
import express from 'express';
import { AgentCard, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultExecutionEventBusManager,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { grpcService, A2AService } from '@a2a-js/sdk/server/grpc';
import { createLegacyAwarePushNotificationSender } from '@a2a-js/sdk/compat/v0_3/server';
import { legacyGrpcService, LegacyA2AService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import * as grpc from '@grpc/grpc-js';

const port = Number(process.argv[2]);
const legacyCompat = { enabled: process.argv[3] === 'legacy' };
const grpcPort = Number(process.argv[4] ?? 0);
const base = `http://127.0.0.1:${port}`;
const grpcUrl = `127.0.0.1:${grpcPort}`;
const card = AgentCard.fromJSON({
  name: 'JS SDK interop agent',
  description: 'echo, steps, ask, slow, reply',
  version: '1.0.0',
  supportedInterfaces: [
    { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    // The compat layer serves 0.3 on the same routes (by the A2A-Version header, 0.3 if absent).
    ...(legacyCompat.enabled
      ? [
          { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
          { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
        ]
      : []),
    ...(grpcPort ? [{ url: grpcUrl, protocolBinding: 'GRPC', protocolVersion: '1.0' }] : []),
    ...(grpcPort && legacyCompat.enabled ? [{ url: grpcUrl, protocolBinding: 'GRPC', protocolVersion: '0.3' }] : []),
  ],
  capabilities: { streaming: true, pushNotifications: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'echo', description: 'echoes', tags: ['test'] }],
});

const textPart = (text) => ({ content: { $case: 'text', value: text } });
const agentMessage = (text, taskId, contextId) => ({
  messageId: randomUUID(),
  role: Role.ROLE_AGENT,
  parts: [textPart(text)],
  taskId: taskId ?? '',
  contextId,
  extensions: [],
  referenceTaskIds: [],
  metadata: undefined,
});
const now = () => new Date().toISOString();

class TestExecutor {
  constructor() {
    this.cancels = new Map();
  }

  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const text = (ctx.userMessage.parts ?? []).map((p) => p.content?.value ?? '').join('');
    const [word, ...restWords] = text.split(' ');
    const rest = restWords.join(' ');
    const status = (state, said) => {
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state, message: said ? agentMessage(said, taskId, contextId) : undefined, timestamp: now() },
          metadata: undefined,
        }),
      );
    };
    const artifact = (text, append = false, lastChunk = true) => {
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: 'out', name: '', description: '', parts: [textPart(text)], metadata: undefined, extensions: [] },
          append,
          lastChunk,
          metadata: undefined,
        }),
      );
    };
    if (word === 'reply') {
      bus.publish(AgentEvent.message(agentMessage(`reply: ${rest}`, undefined, contextId)));
      bus.finished();
      return;
    }
    if (!ctx.task) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
          artifacts: [],
          history: [ctx.userMessage],
          metadata: undefined,
        }),
      );
    }
    if (word === 'slow') {
      status(TaskState.TASK_STATE_WORKING);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 10000);
        this.cancels.set(taskId, {
          contextId,
          stop: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
      return; // cancelTask publishes the canceled state and finishes the bus
    }
    if (word === 'steps') {
      status(TaskState.TASK_STATE_WORKING);
      const n = Number(rest || 3);
      for (let i = 0; i < n; i++) {
        await new Promise((r) => setTimeout(r, 20));
        artifact(`${i} `, i > 0, i === n - 1);
      }
      status(TaskState.TASK_STATE_COMPLETED);
    } else if (word === 'ask') {
      if (ctx.task) {
        artifact(`thanks for ${rest}`);
        status(TaskState.TASK_STATE_COMPLETED);
      } else {
        status(TaskState.TASK_STATE_INPUT_REQUIRED, 'what size?');
      }
    } else {
      artifact(`echo: ${text}`);
      status(TaskState.TASK_STATE_COMPLETED);
    }
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    const running = this.cancels.get(taskId);
    this.cancels.delete(taskId);
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: running?.contextId ?? '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
    bus.finished();
    running?.stop();
  }
}

const taskStore = new InMemoryTaskStore();
const pushStore = new InMemoryPushNotificationStore();
const handler = new DefaultRequestHandler(
  card,
  taskStore,
  new TestExecutor(),
  new DefaultExecutionEventBusManager(),
  pushStore,
  // legacy: webhooks registered over 0.3 get 0.3 bodies (0.3 §9.5), 1.0 ones StreamResponses.
  legacyCompat.enabled
    ? createLegacyAwarePushNotificationSender(pushStore, { timeout: 2000 })
    : new DefaultPushNotificationSender(pushStore, { timeout: 2000 }),
);
const userBuilder = UserBuilder.noAuthentication;
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler, legacyCompat }));
app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder, legacyCompat }));
app.use('/a2a/rest', restHandler({ requestHandler: handler, userBuilder, legacyCompat }));
if (grpcPort) {
  // gRPC first: the test waits for the card, which then lists a listening gRPC interface.
  const rpc = new grpc.Server();
  rpc.addService(A2AService, grpcService({ requestHandler: handler, userBuilder }));
  if (legacyCompat.enabled) rpc.addService(LegacyA2AService, legacyGrpcService({ requestHandler: handler, userBuilder }));
  await new Promise((resolve, reject) =>
    rpc.bindAsync(grpcUrl, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
}
app.listen(port, '127.0.0.1', () => console.log(`listening ${base}`));
