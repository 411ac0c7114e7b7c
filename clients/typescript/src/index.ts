// reviewloop: send review requests to people from TypeScript.
export * from "./client.js";
export * from "./errors.js";
export { verifyWebhook, TOLERANCE_SECONDS } from "./webhooks.js";
