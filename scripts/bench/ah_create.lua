-- POST a new awaithumans task; TOKEN (its admin API token) comes from the
-- environment. Each task needs an idempotency key of its own: a key used
-- again answers with the task it made first.
local counter = 0
local threads = 0

function setup(thread)
  thread:set("prefix", tostring(threads) .. "-" .. tostring(os.time()))
  threads = threads + 1
end

function init(args)
  headers = { ["Authorization"] = "Bearer " .. os.getenv("TOKEN"), ["Content-Type"] = "application/json" }
end

function request()
  counter = counter + 1
  local body = '{"task":"Publish this post?","payload":{"post":"Publish this post?"},' ..
    '"payload_schema":{"type":"object"},"response_schema":{"type":"object","properties":' ..
    '{"decision":{"type":"string","enum":["approve","reject"]}}},"timeout_seconds":3600,' ..
    '"idempotency_key":"bench-' .. prefix .. '-' .. counter .. '"}'
  return wrk.format("POST", "/api/tasks", headers, body)
end
