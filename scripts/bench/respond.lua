-- Answer distinct pending requests: thread n takes ids n, n+T, n+2T, ...
-- from the file IDS, so no two calls answer the same request.
local threads = {}
local counter = 0

function setup(thread)
  thread:set("offset", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  ids = {}
  for line in io.lines(os.getenv("IDS")) do ids[#ids + 1] = line end
  stride = tonumber(os.getenv("THREADS"))
  next_index = offset + 1
  headers = { ["Authorization"] = "Bearer " .. os.getenv("KEY"), ["Content-Type"] = "application/json" }
end

function request()
  local id = ids[next_index]
  if id == nil then id = ids[1] end
  next_index = next_index + stride
  return wrk.format("POST", "/v1/api/requests/" .. id .. "/respond", headers, '{"response_data":"approve"}')
end
