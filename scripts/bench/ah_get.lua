-- GET one awaithumans task, again and again (TOKEN, TASK from the environment).
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
wrk.path = "/api/tasks/" .. os.getenv("TASK")
