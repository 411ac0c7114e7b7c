-- GET one request, again and again.
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY")
wrk.path = "/v1/api/requests/" .. os.getenv("REQUEST")
