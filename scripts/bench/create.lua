-- POST a new review request; KEY and LOOP come from the environment.
-- With VARY set, each request asks its own question (its text carries a
-- counter), so a loop that joins repeated questions finds none to join.
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY")
wrk.headers["Content-Type"] = "application/json"
local function body(text)
  return '{"request_text":"' .. text .. '","type":"markdown","response_type":"single_select",' ..
    '"response_config":{"options":["approve","reject"]},"priority":"high","processing_type":"deferred"}'
end
wrk.body = body("Publish this post?")
wrk.path = "/v1/api/loops/" .. os.getenv("LOOP") .. "/requests"
if os.getenv("VARY") then
  local n = 0
  request = function()
    n = n + 1
    return wrk.format(nil, nil, nil, body("Publish post " .. n .. "?"))
  end
end
