-- GET /v1/test: the key check alone (no database trip once the key is cached).
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY")
wrk.path = "/v1/test"
