// The client: every request-side operation of the API, long-polling
// `wait`, `requireApproval` and `humanAsTool`, with retries on 429/503
// that honour Retry-After and an Idempotency-Key on every create.

import { randomUUID } from "node:crypto";

import { ConnectionError, errorFor, RateLimitError, Rejected, ServerError, WaitTimeout } from "./errors.js";

/** Statuses of a request that will not change any more. */
export const ENDED = ["completed", "timeout", "cancelled"] as const;
/** The longest the service holds a long-poll (seconds). */
const LONG_POLL_SECONDS = 60;
const RETRIED = new Set([429, 502, 503, 504]);

export type Priority = "low" | "medium" | "high" | "critical";
export type ResponseType = "text" | "single_select" | "multi_select" | "rating" | "number" | "boolean";
export type RequestStatus = "pending" | "claimed" | "completed" | "timeout" | "cancelled";

/** A loop of reviewers. */
export interface Loop {
  id: string;
  name: string;
  description: string | null;
  creator_id: string;
  [field: string]: unknown;
}

/** One reviewer's answer (a quorum request has several). */
export interface Answer {
  user_id: string;
  email: string;
  response_data: unknown;
  response_at: string;
  comment: string | null;
}

/** A review request, as its requester sees it. */
export interface ReviewRequest {
  id: string;
  loop_id: string;
  status: RequestStatus;
  request_text: string;
  response_type: ResponseType;
  priority: Priority;
  context: unknown;
  default_response: unknown;
  response_data: unknown;
  response_comment: string | null;
  response_by: string | null;
  responses: Answer[];
  timeout_at: string;
  created_at: string;
  test: boolean;
  /** The open request this one joined; it ends when that one ends, with its answer. */
  coalesced_into?: string | null;
  /** The earlier request whose answer, given by a person, this one took when it was made. */
  reused_from?: string | null;
  [field: string]: unknown;
}

/** What a new request says; `request_text` is required. */
export interface RequestFields {
  request_text?: string;
  response_type?: ResponseType;
  response_config?: Record<string, unknown>;
  priority?: Priority;
  type?: "markdown" | "image";
  processing_type?: "time-sensitive" | "deferred";
  timeout_seconds?: number;
  default_response?: unknown;
  context?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  callback_url?: string;
  tags?: string[];
  test_response?: unknown;
  test_delay_seconds?: number;
  /** While one of your requests in the loop with this key is open, this one joins it instead of asking people again. */
  coalesce_key?: string;
  [field: string]: unknown;
}

/** One page of a request list; `next_offset` is `null` on the last. */
export interface RequestPage {
  requests: ReviewRequest[];
  total: number;
  limit: number;
  offset: number;
  next_offset: number | null;
}

export interface RequestFilters {
  status?: RequestStatus;
  priority?: Priority;
  loop_id?: string;
  /** `key` (default): the requests made with this key; `account`: the whole account's. */
  scope?: "key" | "account";
  limit?: number;
  offset?: number;
  sort?: "created_at_desc" | "created_at_asc" | "priority_desc" | "status_asc";
}

/** A test-mode key's clock. */
export interface TestClock {
  now: string;
  offset_seconds: number;
  answered?: number;
  timed_out?: number;
}

export interface ClientOptions {
  /** Where the service runs (default `http://127.0.0.1:8080`). */
  baseUrl?: string;
  apiKey?: string;
  /** Tries after the first, on 429, 502–504 and lost connections (default 3). */
  maxRetries?: number;
  /** Milliseconds a call may take (default 30 000; long-polls get 30 s more than they wait). */
  timeoutMs?: number;
  /** Another `fetch` (tests, proxies). */
  fetch?: typeof fetch;
}

interface Call {
  method: string;
  path: string;
  query?: Record<string, unknown>;
  body?: unknown;
  idempotencyKey?: string;
  timeoutMs?: number;
  /** Tries after the first; the client's own when absent. */
  retries?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function shown(value: unknown): unknown {
  try {
    return JSON.stringify(value) === undefined ? String(value) : JSON.parse(JSON.stringify(value));
  } catch {
    return String(value);
  }
}

export class ReviewLoop {
  readonly baseUrl: string;
  private readonly apiKey?: string;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
    this.apiKey = options.apiKey;
    this.maxRetries = options.maxRetries ?? 3;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetch = options.fetch ?? fetch;
  }

  private async run<T>(call: Call): Promise<T> {
    // Sending it again cannot do it twice: a read, or a create (it carries
    // its idempotency key). Anything else only when the service refused it
    // before doing it (429, 503).
    const repeatable = call.method === "GET" || call.idempotencyKey !== undefined;
    const retries = call.retries ?? this.maxRetries;
    for (let attempt = 0; ; attempt++) {
      const url = new URL(this.baseUrl + call.path);
      for (const [k, v] of Object.entries(call.query ?? {})) {
        if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
      }
      const headers: Record<string, string> = { Accept: "application/json", "User-Agent": "reviewloop-js/0.1.0" };
      if (this.apiKey) headers.Authorization = `Bearer ${this.apiKey}`;
      if (call.idempotencyKey) headers["Idempotency-Key"] = call.idempotencyKey;
      if (call.body !== undefined) headers["Content-Type"] = "application/json";
      let response: Response;
      try {
        response = await this.fetch(url, {
          method: call.method,
          headers,
          body: call.body === undefined ? undefined : JSON.stringify(call.body),
          signal: AbortSignal.timeout(call.timeoutMs ?? this.timeoutMs),
        });
      } catch (error) {
        if (!repeatable || attempt >= retries) {
          throw new ConnectionError(`the service could not be reached: ${(error as Error).message}`);
        }
        await sleep(this.backoff(attempt));
        continue;
      }
      if (response.ok) {
        const body = (await response.json()) as { data?: T };
        return (body && typeof body === "object" && "data" in body ? body.data : body) as T;
      }
      const retryAfter = Number(response.headers.get("retry-after") ?? NaN);
      // 409 to a create: the same create is still being made; ask again.
      const retried = RETRIED.has(response.status) || (call.idempotencyKey !== undefined && response.status === 409);
      const safe = repeatable || response.status === 429 || response.status === 503;
      if (safe && retried && attempt < retries) {
        await sleep(Number.isFinite(retryAfter) ? Math.min(retryAfter, 60) * 1000 : this.backoff(attempt));
        continue;
      }
      const text = await response.text();
      let body: unknown = text;
      let message = text || response.statusText;
      try {
        body = JSON.parse(text);
        const b = body as { msg?: string; error?: { message?: string } };
        message = b.msg ?? b.error?.message ?? message;
      } catch {
        // not JSON: the text is the message
      }
      throw errorFor(response.status, message, body, Number.isFinite(retryAfter) ? retryAfter : undefined);
    }
  }

  private backoff(attempt: number): number {
    return Math.min(500 * 2 ** attempt, 8000) * (0.5 + Math.random() / 2);
  }

  /** The loops this key's account created. */
  async listLoops(): Promise<Loop[]> {
    return (await this.run<{ loops: Loop[] }>({ method: "GET", path: "/v1/api/loops" })).loops;
  }

  async getLoop(loopId: string): Promise<Loop> {
    return (await this.run<{ loop: Loop }>({ method: "GET", path: `/v1/api/loops/${loopId}` })).loop;
  }

  /**
   * Sends a request to a loop; by default a `boolean` question of `medium`
   * priority. A retry after a lost answer never asks twice.
   */
  async createRequest(loopId: string, fields: RequestFields, options: { idempotencyKey?: string } = {}):
    Promise<ReviewRequest> {
    const body = {
      type: "markdown",
      response_type: "boolean",
      priority: "medium",
      processing_type: fields.timeout_seconds !== undefined ? "time-sensitive" : "deferred",
      ...fields,
    };
    const made = await this.run<{ request: ReviewRequest }>({
      method: "POST",
      path: `/v1/api/loops/${loopId}/requests`,
      body,
      idempotencyKey: options.idempotencyKey ?? randomUUID(),
    });
    return made.request;
  }

  async getRequest(requestId: string): Promise<ReviewRequest> {
    return (await this.run<{ request: ReviewRequest }>({ method: "GET", path: `/v1/api/requests/${requestId}` }))
      .request;
  }

  /** One page of requests; see `iterRequests` for all of them. */
  async listRequests(filters: RequestFilters = {}): Promise<RequestPage> {
    const page = await this.run<RequestPage & { pagination?: { next_offset: number | null } }>({
      method: "GET",
      path: "/v1/api/requests",
      query: { ...filters },
    });
    return { ...page, next_offset: page.pagination?.next_offset ?? null };
  }

  /** Every request matching `filters`, page after page. */
  async *iterRequests(filters: RequestFilters = {}): AsyncGenerator<ReviewRequest> {
    let offset: number | null = filters.offset ?? 0;
    while (offset !== null) {
      const page: RequestPage = await this.listRequests({ ...filters, offset });
      yield* page.requests;
      offset = page.next_offset;
    }
  }

  async updateRequest(requestId: string, fields: Partial<RequestFields>): Promise<ReviewRequest> {
    return (await this.run<{ request: ReviewRequest }>({
      method: "PATCH",
      path: `/v1/api/requests/${requestId}`,
      body: fields,
    })).request;
  }

  async cancelRequest(requestId: string): Promise<{ request_id: string; status: string }> {
    return this.run({ method: "DELETE", path: `/v1/api/requests/${requestId}` });
  }

  async addFeedback(requestId: string, fields: Record<string, unknown>): Promise<Record<string, unknown>> {
    return (await this.run<{ feedback: Record<string, unknown> }>({
      method: "POST",
      path: `/v1/api/requests/${requestId}/feedback`,
      body: fields,
    })).feedback;
  }

  /** A test-mode key's clock. */
  async testClock(): Promise<TestClock> {
    return this.run({ method: "GET", path: "/v1/api/test/clock" });
  }

  /** Moves a test-mode key's clock ahead; test requests due within the jump end before this returns. */
  async advanceClock(seconds: number): Promise<TestClock> {
    return this.run({ method: "POST", path: "/v1/api/test/clock", body: { advance_seconds: seconds } });
  }

  /**
   * Long-polls until the request ended and returns it. Network errors and
   * restarts of the service are waited out; throws `WaitTimeout` after
   * `timeoutSeconds` (never by default).
   */
  async wait(requestId: string, timeoutSeconds?: number): Promise<ReviewRequest> {
    const deadline = timeoutSeconds === undefined ? undefined : Date.now() + timeoutSeconds * 1000;
    let failures = 0;
    let request: ReviewRequest | undefined;
    for (;;) {
      const left = deadline === undefined ? LONG_POLL_SECONDS : Math.max(0, (deadline - Date.now()) / 1000);
      const wait = Math.max(1, Math.min(LONG_POLL_SECONDS, Math.floor(left)));
      let pause = 0;
      try {
        // No retries of its own (this loop has them), and never much past the deadline.
        request = (await this.run<{ request: ReviewRequest }>({
          method: "GET",
          path: `/v1/api/requests/${requestId}`,
          query: { wait },
          timeoutMs: (wait + (deadline === undefined ? 30 : 5)) * 1000,
          retries: 0,
        })).request;
        failures = 0;
      } catch (error) {
        if (!(error instanceof ConnectionError || error instanceof ServerError || error instanceof RateLimitError)) {
          throw error;
        }
        failures += 1;
        pause = error instanceof RateLimitError && error.retryAfter !== undefined
          ? Math.min(error.retryAfter, 300) * 1000
          : Math.min(500 * 2 ** failures, 10_000);
        if (deadline !== undefined) pause = Math.min(pause, Math.max(0, deadline - Date.now()));
      }
      if (request && (ENDED as readonly string[]).includes(request.status)) return request;
      if (deadline !== undefined && Date.now() >= deadline) {
        throw new WaitTimeout(`request ${requestId} did not end within ${timeoutSeconds} s`, request);
      }
      if (pause) await sleep(pause);
    }
  }

  /** Asks `loopId` a yes/no question and waits; throws `Rejected` unless the answer is yes. */
  async approve(loopId: string, fields: RequestFields): Promise<ReviewRequest> {
    const made = await this.createRequest(loopId, {
      response_type: "boolean",
      default_response: false,
      timeout_seconds: 3600,
      ...fields,
    });
    const ended = await this.wait(made.id);
    if ((ended.status === "completed" || ended.status === "timeout") && ended.response_data === true) return ended;
    const reason = ended.status === "timeout" || ended.status === "cancelled" ? ended.status : "rejected";
    const said = ended.response_comment ? `: ${ended.response_comment}` : "";
    throw new Rejected(`not approved (${reason})${said}`, ended, reason);
  }

  /**
   * `fn`, asking `loopId` before each call: the question names the function
   * and carries its arguments in `context`; it runs only if approved, and
   * otherwise throws `Rejected` with the reviewer's comment.
   */
  requireApproval<A extends unknown[], R>(
    loopId: string,
    fn: (...args: A) => R | Promise<R>,
    fields: RequestFields = {},
  ): (...args: A) => Promise<R> {
    const name = fn.name || "a function";
    return async (...args: A): Promise<R> => {
      const argumentsShown = args.map(shown);
      const call = `${name}(${argumentsShown.map((a) => JSON.stringify(a)?.slice(0, 200)).join(", ")})`;
      await this.approve(loopId, {
        request_text: `Approve running \`${name}\`?\n\n\`${call}\``.slice(0, 2000),
        ...fields,
        context: { ...(fields.context ?? {}), function: name, arguments: argumentsShown },
      });
      return fn(...args);
    };
  }

  /** A function `ask(question)` that puts the question to `loopId` as a `text` request and returns the answer. */
  humanAsTool(loopId: string, fields: RequestFields = {}): (question: string) => Promise<string> {
    return async (question: string) => {
      const made = await this.createRequest(loopId, {
        response_type: "text",
        timeout_seconds: 3600,
        ...fields,
        request_text: question,
      });
      const ended = await this.wait(made.id);
      if (ended.status === "cancelled" || ended.response_data === null || ended.response_data === undefined) {
        throw new Rejected(`no answer (${ended.status})`, ended, ended.status);
      }
      return String(ended.response_data);
    };
  }
}


