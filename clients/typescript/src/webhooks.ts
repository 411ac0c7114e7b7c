// Checking that a webhook delivery or a request's callback came from
// reviewloop: the Standard Webhooks signature (`webhook-id`,
// `webhook-timestamp`, `webhook-signature`) when it is there, else
// `X-ReviewLoop-Signature-256` (`sha256=` + hex HMAC of the body).

import { createHmac, timingSafeEqual } from "node:crypto";

import { WebhookVerificationError } from "./errors.js";

/** How far a Standard Webhooks timestamp may be from now (seconds). */
export const TOLERANCE_SECONDS = 300;

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === "function") {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The key the server signs with: the bytes of a `whsec_` secret's base64
 * when it is canonical base64, else the secret's text. */
function standardKey(secret: string): Buffer {
  if (secret.startsWith("whsec_")) {
    const encoded = secret.slice("whsec_".length);
    const decoded = Buffer.from(encoded, "base64");
    if (decoded.length > 0 && decoded.toString("base64") === encoded) return decoded;
  }
  return Buffer.from(secret);
}

/**
 * Returns the delivery's JSON once its signature holds; throws
 * `WebhookVerificationError` otherwise. Pass the body exactly as received
 * (a `Buffer` or the raw text): parsing and re-serializing changes it.
 *
 * The Standard Webhooks signature must hold and its timestamp be recent,
 * so a captured delivery cannot be replayed later (use `webhook-id` to
 * drop duplicates). With `allowBodySignature`, a delivery without those
 * headers is accepted on `X-ReviewLoop-Signature-256` alone, which proves
 * the body but not when it was sent.
 */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: Headers,
  secret: string,
  options: { toleranceSeconds?: number; now?: number; allowBodySignature?: boolean } = {},
): unknown {
  const raw = typeof body === "string" ? Buffer.from(body) : Buffer.from(body);
  const id = header(headers, "webhook-id");
  const stamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (id && stamp && signatures) {
    const sent = Number(stamp);
    if (!Number.isInteger(sent)) throw new WebhookVerificationError("webhook-timestamp is not a number");
    const now = options.now ?? Date.now() / 1000;
    if (Math.abs(now - sent) > (options.toleranceSeconds ?? TOLERANCE_SECONDS)) {
      throw new WebhookVerificationError("webhook-timestamp is too far from now (a replay?)");
    }
    const expected = createHmac("sha256", standardKey(secret))
      .update(`${id}.${stamp}.`)
      .update(raw)
      .digest("base64");
    const given = signatures.split(" ").filter((p) => p.startsWith("v1,")).map((p) => p.slice(3));
    if (!given.some((g) => same(expected, g))) {
      throw new WebhookVerificationError("webhook-signature does not match this secret");
    }
  } else if (!options.allowBodySignature) {
    throw new WebhookVerificationError(
      "the delivery has no webhook-id, webhook-timestamp and webhook-signature headers");
  } else {
    const signature = header(headers, "x-reviewloop-signature-256") ?? header(headers, "x-hitl-signature-256");
    if (!signature) throw new WebhookVerificationError("the delivery carries no signature");
    const expected = "sha256=" + createHmac("sha256", secret).update(raw).digest("hex");
    if (!same(expected, signature.trim())) {
      throw new WebhookVerificationError("X-ReviewLoop-Signature-256 does not match this secret");
    }
  }
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    throw new WebhookVerificationError("the body is not JSON");
  }
}
