// Verifies one delivery with the official Standard Webhooks library (npm).
// Reads the secret from WEBHOOK_SECRET, the headers as JSON from
// WEBHOOK_HEADERS and the raw body from stdin; exits 0 when the library
// accepts it, 1 (with its complaint) when it does not.
const { Webhook } = require("standardwebhooks");

const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk));
process.stdin.on("end", () => {
  const body = Buffer.concat(chunks).toString("utf8");
  try {
    new Webhook(process.env.WEBHOOK_SECRET).verify(body, JSON.parse(process.env.WEBHOOK_HEADERS));
  } catch (error) {
    console.error(`refused: ${error}`);
    process.exit(1);
  }
  console.log("verified");
});
