-- POST a new review request; KEY and LOOP come from the environment.
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY")
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"request_text":"Publish this post?","type":"markdown","response_type":"single_select",' ..
  '"response_config":{"options":["approve","reject"]},"priority":"high","processing_type":"deferred"}'
wrk.path = "/v1/api/loops/" .. os.getenv("LOOP") .. "/requests"
