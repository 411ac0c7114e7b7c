// An agent's side of an MCP session with reviewloop, through the official
// TypeScript SDK (@modelcontextprotocol/sdk from npm): list the tools and
// loops, ask the loop's people, wait for their answer, and make one
// mistake to see the tool error. Every call and result is printed as one
// JSON line ({"call"} / {"result"}) for the test to read; the test answers
// the request as a reviewer when it sees the "created" line.
//
// MCP_URL, MCP_KEY and LOOP_ID come from the environment.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const {
  StreamableHTTPClientTransport,
} = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

function line(value) {
  process.stdout.write(JSON.stringify(value) + "\n");
}

async function call(client, name, args) {
  line({ call: name, arguments: args });
  const result = await client.callTool(
    { name, arguments: args },
    undefined,
    { timeout: 120000 },
  );
  line({ result: name, isError: result.isError === true, content: result.content, structured: result.structuredContent });
  return result;
}

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.MCP_KEY}` } },
  });
  const client = new Client({ name: "reviewloop-test-agent", version: "1.0.0" });
  await client.connect(transport);
  line({ server: client.getServerVersion() });

  const { tools } = await client.listTools();
  line({ tools: tools.map((t) => t.name) });

  await call(client, "list_loops", {});
  const created = await call(client, "create_request", {
    loop_id: process.env.LOOP_ID,
    request_text: "Ship the **release notes** for 2.4?",
    response_type: "single_select",
    response_config: {
      options: [
        { value: "ship", label: "Ship it", color: "#16a34a" },
        { value: "hold", label: "Hold", color: "#dc2626" },
      ],
    },
    default_response: "hold",
    priority: "high",
    timeout_seconds: 600,
  });
  const requestId = created.structuredContent.request_id;
  line({ created: requestId });

  await call(client, "wait_for_response", { request_id: requestId, wait_seconds: 60 });
  await call(client, "get_request", { request_id: requestId });
  await call(client, "list_requests", { status: "completed" });
  await call(client, "cancel_request", { request_id: requestId });
  await call(client, "create_request", {
    loop_id: process.env.LOOP_ID,
    request_text: "",
    response_type: "rating",
    response_config: { scale_max: 5 },
    default_response: 9,
  });
  await client.close();
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + "\n");
  process.exit(1);
});
