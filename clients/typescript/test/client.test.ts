// The TypeScript client against the real binary (REVIEWLOOP_BIN, by
// default the workspace's debug build): every operation, the approve,
// reject and timeout paths of requireApproval with a reviewer answering
// over the API, humanAsTool, a restart during wait, a bad and a
// rate-limited key, test mode, and the signature of a real delivery.

import { ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer, IncomingHttpHeaders } from "node:http";
import { AddressInfo, createServer as netServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

import {
  AuthenticationError,
  NotFoundError,
  RateLimitError,
  Rejected,
  ReviewLoop,
  ReviewLoopError,
  ValidationError,
  verifyWebhook,
  WebhookVerificationError,
} from "../src/index.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const BIN = process.env.REVIEWLOOP_BIN ?? resolve(here, "../../../../target/debug/reviewloop");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running: Server[] = [];
after(() => running.forEach((s) => s.kill()));

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const s = netServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => done(port));
    });
  });
}

class Server {
  child!: ChildProcess;
  lines: string[] = [];
  adminKey = "";
  readonly db: string;
  constructor(readonly port: number, readonly env: Record<string, string>) {
    this.db = `sqlite://${join(mkdtempSync(join(tmpdir(), "rl-ts-")), "reviewloop.db")}`;
    running.push(this);
  }
  get base() {
    return `http://127.0.0.1:${this.port}`;
  }
  static async start(env: Record<string, string> = {}): Promise<Server> {
    const server = new Server(await freePort(), env);
    await server.launch();
    server.adminKey = await server.line("reviewloop: bootstrap API key: ");
    return server;
  }
  async launch() {
    this.lines = [];
    this.child = spawn(BIN, ["--bind", `127.0.0.1:${this.port}`, "--database-url", this.db], {
      env: { ...process.env, RUST_LOG: "warn", ...this.env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let rest = "";
    this.child.stderr!.on("data", (chunk: Buffer) => {
      rest += chunk.toString();
      const parts = rest.split("\n");
      rest = parts.pop() ?? "";
      this.lines.push(...parts);
    });
    await this.line("reviewloop: listening on ");
  }
  async line(prefix: string): Promise<string> {
    for (let i = 0; i < 300; i++) {
      const found = this.lines.find((l) => l.startsWith(prefix));
      if (found) return found.slice(prefix.length);
      await sleep(100);
    }
    throw new Error(`no ${prefix} from the server: ${this.lines.join("\n")}`);
  }
  kill() {
    this.child.kill("SIGKILL");
  }
  key(email: string, ...extra: string[]): string {
    const out = execFileSync(BIN, ["key", "create", "--email", email, ...extra, "--json", "--database-url", this.db],
      { env: { ...process.env, ...this.env } });
    return JSON.parse(out.toString()).api_key;
  }
  async api(key: string, method: string, path: string, body?: unknown): Promise<any> {
    const reply = await fetch(this.base + path, {
      method,
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await reply.json()) as any;
    if (!reply.ok) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(json)}`);
    return json.data;
  }
  async loopWithReviewer(): Promise<[string, string]> {
    const made = await this.api(this.adminKey, "POST", "/v1/api/loops", { name: "Refunds" });
    const reviewer = this.key("rev@example.com");
    await this.api(reviewer, "POST", "/v1/api/loops/join", { invite_code: made.loop.invite_code });
    return [made.loop.id, reviewer];
  }
}

/** A reviewer who answers the next request in their inbox over the API. */
async function answerNext(server: Server, key: string, answer: unknown, comment?: string): Promise<string> {
  for (let i = 0; i < 300; i++) {
    try {
      const inbox = await server.api(key, "GET", "/v1/api/inbox");
      if (inbox.requests.length) {
        const id = inbox.requests[0].id;
        await server.api(key, "POST", `/v1/api/requests/${id}/respond`, { response_data: answer, comment });
        return id;
      }
    } catch {
      // the server may be restarting
    }
    await sleep(100);
  }
  throw new Error("nothing reached the inbox");
}

test("every request-side operation", async () => {
  const server = await Server.start();
  const [loopId] = await server.loopWithReviewer();
  const client = new ReviewLoop({ baseUrl: server.base, apiKey: server.adminKey });
  assert.deepEqual((await client.listLoops()).map((l) => l.id), [loopId]);
  assert.equal((await client.getLoop(loopId)).name, "Refunds");
  const made = await client.createRequest(loopId, { request_text: "Refund #1042?", priority: "high" },
    { idempotencyKey: "refund-1042" });
  const again = await client.createRequest(loopId, { request_text: "Refund #1042?", priority: "high" },
    { idempotencyKey: "refund-1042" });
  assert.equal(again.id, made.id, "a retried create never asks twice");
  assert.equal((await client.getRequest(made.id)).status, "pending");
  assert.equal((await client.updateRequest(made.id, { priority: "critical" })).priority, "critical");
  for (let n = 0; n < 3; n++) await client.createRequest(loopId, { request_text: `Q${n}?`, response_type: "text" });
  const page = await client.listRequests({ limit: 2 });
  assert.deepEqual([page.requests.length, page.total, page.next_offset], [2, 4, 2]);
  let all = 0;
  for await (const _ of client.iterRequests({ limit: 2 })) all++;
  assert.equal(all, 4);
  assert.equal((await client.cancelRequest(made.id)).status, "cancelled");
  assert.equal((await client.wait(made.id, 5)).status, "cancelled");
  await assert.rejects(client.getRequest("5f5e1000ab010203040506ff"), NotFoundError);
  await assert.rejects(client.createRequest(loopId, { request_text: "" }), (e: unknown) =>
    e instanceof ValidationError && e.message.includes("request_text"));
  server.kill();
});

test("requireApproval runs what is approved and refuses what is not", async () => {
  const server = await Server.start();
  const [loopId, reviewer] = await server.loopWithReviewer();
  const client = new ReviewLoop({ baseUrl: server.base, apiKey: server.adminKey });
  const refunded: unknown[] = [];
  const refund = client.requireApproval(loopId, async function refund(orderId: string, amount: number) {
    refunded.push([orderId, amount]);
    return "refunded";
  });
  const [result, askedId] = await Promise.all([refund("A-1", 12.5), answerNext(server, reviewer, true, "ok")]);
  assert.equal(result, "refunded");
  assert.deepEqual(refunded, [["A-1", 12.5]]);
  const asked = await client.getRequest(askedId);
  assert.deepEqual(asked.context, { function: "refund", arguments: ["A-1", 12.5] });
  const rated = await client.addFeedback(askedId, { rating: 5, comment: "quick and right" });
  assert.deepEqual([rated.rating, rated.comment], [5, "quick and right"]);

  const [refused] = await Promise.allSettled([refund("B-2", 99), answerNext(server, reviewer, false, "Not today")]);
  assert.equal(refused.status, "rejected");
  const error = (refused as PromiseRejectedResult).reason;
  assert.ok(error instanceof Rejected);
  assert.deepEqual([error.reason, error.comment], ["rejected", "Not today"]);
  assert.equal(refunded.length, 1);

  const slow = client.requireApproval(loopId, () => "ran", { timeout_seconds: 1 });
  await assert.rejects(slow(), (e: unknown) => e instanceof Rejected && e.reason === "timeout");

  const ask = client.humanAsTool(loopId);
  const [answer] = await Promise.all([ask("Which region?"), answerNext(server, reviewer, "EU")]);
  assert.equal(answer, "EU");
  server.kill();
});

test("wait rides out a server restart", async () => {
  const server = await Server.start();
  const [loopId, reviewer] = await server.loopWithReviewer();
  const client = new ReviewLoop({ baseUrl: server.base, apiKey: server.adminKey });
  const made = await client.createRequest(loopId, { request_text: "Still there?" });
  const waiting = client.wait(made.id, 60);
  await sleep(1000);
  server.kill();
  await sleep(1500);
  await server.launch();
  await answerNext(server, reviewer, true);
  const ended = await waiting;
  assert.deepEqual([ended.status, ended.response_data], ["completed", true]);
  server.kill();
});

test("a bad key, a rate-limited key and test mode", async () => {
  const server = await Server.start();
  const [loopId] = await server.loopWithReviewer();
  await assert.rejects(new ReviewLoop({ baseUrl: server.base, apiKey: "rl_nope" }).listLoops(),
    (e: unknown) => e instanceof AuthenticationError && e.status === 401);
  const tight = new ReviewLoop({ baseUrl: server.base, apiKey: server.key("tight@example.com", "--rate-limit", "2"),
    maxRetries: 0 });
  await tight.listLoops();
  await tight.listLoops();
  await assert.rejects(tight.listLoops(), (e: unknown) =>
    e instanceof RateLimitError && e.status === 429 && (e.retryAfter ?? 0) > 0);

  const test = new ReviewLoop({ baseUrl: server.base, apiKey: server.key("admin@localhost", "--test") });
  const answered = await test.createRequest(loopId, { request_text: "Approve?", test_response: true });
  assert.equal((await test.wait(answered.id, 10)).response_data, true);
  const later = await test.createRequest(loopId, { request_text: "Later?", timeout_seconds: 3600 });
  const moved = await test.advanceClock(3601);
  assert.equal(moved.timed_out, 1);
  assert.equal((await test.wait(later.id, 10)).status, "timeout");
  server.kill();
});

test("a real delivery verifies and a changed byte does not", async () => {
  const server = await Server.start({ REVIEWLOOP_ALLOW_PRIVATE_TARGETS: "true" });
  const got: Array<[IncomingHttpHeaders, Buffer]> = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push([req.headers, Buffer.concat(chunks)]);
      res.end();
    });
  }).listen(0, "127.0.0.1");
  await new Promise((r) => receiver.once("listening", r));
  const port = (receiver.address() as AddressInfo).port;
  const hook = await server.api(server.adminKey, "POST", "/v1/api/webhooks",
    { url: `http://127.0.0.1:${port}/hook`, events: ["request.created"] });
  const secret: string = hook.webhook.secret;
  const [loopId] = await server.loopWithReviewer();
  await new ReviewLoop({ baseUrl: server.base, apiKey: server.adminKey }).createRequest(loopId,
    { request_text: "Signed?" });
  for (let i = 0; i < 200 && !got.length; i++) await sleep(100);
  const [headers, body] = got[0];
  assert.equal((verifyWebhook(body, headers, secret) as { event: string }).event, "request.created");
  const bodyOnly = Object.fromEntries(Object.entries(headers).filter(([k]) => !k.startsWith("webhook-")));
  assert.throws(() => verifyWebhook(body, bodyOnly, secret), WebhookVerificationError, "could be a replay");
  assert.equal((verifyWebhook(body, bodyOnly, secret, { allowBodySignature: true }) as { event: string }).event,
    "request.created");
  const changed = Buffer.from(body);
  changed[changed.length >> 1] ^= 1;
  for (const given of [headers, bodyOnly]) {
    assert.throws(() => verifyWebhook(changed, given, secret, { allowBodySignature: true }),
      WebhookVerificationError);
  }
  assert.throws(() => verifyWebhook(body, headers, secret, { now: Date.now() / 1000 + 3600 }),
    WebhookVerificationError);
  assert.ok(new WebhookVerificationError("x") instanceof ReviewLoopError);
  receiver.close();
  server.kill();
});
