-- wrk script: one request shape per run, given by the environment.
--   BENCH_METHOD  POST (default) or GET
--   BENCH_PATH    request path (default /)
--   BENCH_BODY    request body; every "{ID}" becomes a per-request unique id
-- At the end, prints one line "BENCH_JSON {...}" with totals and the latency distribution.
local method = os.getenv("BENCH_METHOD") or "POST"
local path = os.getenv("BENCH_PATH") or "/"
local body = os.getenv("BENCH_BODY")
local unique = body ~= nil and string.find(body, "{ID}", 1, true) ~= nil
local counter = 0
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

wrk.method = method
wrk.path = path
wrk.headers["A2A-Version"] = "1.0"
if body ~= nil then
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = body
end

if unique then
  request = function()
    counter = counter + 1
    local b = string.gsub(body, "{ID}", tostring(tid) .. "-" .. tostring(counter))
    return wrk.format(method, path, nil, b)
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,' ..
    '"write":%d,"status":%d,"timeout":%d},"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f,' ..
    '"max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.mean, latency.max))
end
