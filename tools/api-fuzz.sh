#!/usr/bin/env bash
# Fuzzes the control API of a live `scanout serve` with schemathesis against docs/openapi.json:
# the service runs headless on a free loopback port (no Unix socket, a scratch state directory,
# no rate limit) with a screen of two zones (`layout`: the main zone playing .fixtures/counter.mp4
# in a loop, a picture-in-picture zone "pip" playing it too, so that /layout and /zones/{id}/...
# act on real zones), and schemathesis runs its examples,
# coverage and fuzzing phases over every operation but the endless /events stream. It fails on a
# finding: any 5xx but /health's 503 (the service reporting itself down, as after a generated
# stop: the answer /health exists for), a response whose status, content type, headers or body
# the document does not describe (response_schema_conformance among them), a malformed request
# accepted, a method not refused with 405 and `Allow`. Bounded: --max-examples
# (SCANOUT_FUZZ_EXAMPLES, default 20) and --max-time (SCANOUT_FUZZ_SECONDS, default 150).
# Builds nothing: run `swift build` first.
#   tools/api-fuzz.sh [extra st run arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
exe=${SCANOUT_BIN:-.build/debug/scanout}
[[ -x $exe ]] || { echo "api-fuzz: $exe is missing; run swift build first" >&2; exit 1; }
venv=$(tools/setup-schemathesis.sh)
tools/make-fixtures.sh .fixtures
work=$(mktemp -d /tmp/scanout-fuzz.XXXXXX)
pid=
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
clip="$PWD/.fixtures/counter.mp4"
printf '{"rateLimit": null, "layout": {"width": 640, "height": 360, "zones": [{"id": "main"}, {"id": "pip", "x": "60%%", "y": "60%%", "width": "35%%", "height": "35%%", "z": 1, "playlist": ["%s"]}]}}\n' \
  "$clip" >"$work/scanout.json"
"$exe" serve --config "$work/scanout.json" --host 127.0.0.1 --port 0 --no-socket --output headless \
  --state-dir "$work/state" --repeat all "$clip" 2>"$work/serve.log" &
pid=$!
port=
for _ in $(seq 1 200); do
  port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$work/serve.log" | head -n1)
  [[ -n $port ]] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; echo "api-fuzz: scanout serve exited" >&2; exit 1; }
  sleep 0.1
done
[[ -n $port ]] || { cat "$work/serve.log" >&2; echo "api-fuzz: scanout serve did not listen" >&2; exit 1; }
echo "api-fuzz: scanout serve (pid $pid) on 127.0.0.1:$port; schemathesis $("$venv/bin/st" --version | awk '{print $NF}')"
# Any 5xx fails, but /health's 503: the service down is what /health reports. The offline
# routes' documented 503 (no store) and 507 cannot be right here (the store is on, in a scratch
# directory): they fail too. /health's exception is made from the document, so that it is
# checked to be documented.
python3 - docs/openapi.json >"$work/schemathesis.toml" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
answers = {("/health", "get"): ["503"]}
for (path, method), statuses in sorted(answers.items()):
    documented = doc["paths"][path][method].get("responses", {})
    missing = [s for s in statuses if s not in documented]
    if missing:
        sys.exit(f"api-fuzz: {method.upper()} {path} does not document {missing}")
    allowed = ", ".join(json.dumps(s) for s in ["2xx", "3xx", "4xx"] + statuses)
    print(f'[[operations]]\ninclude-path = {json.dumps(path)}\ninclude-method = "{method.upper()}"')
    print(f'checks.not_a_server_error.expected-statuses = [{allowed}]\n')
PY
# Every check runs (`all`: not_a_server_error, status_code_conformance, content_type_conformance,
# response_headers_conformance, response_schema_conformance, negative_data_rejection, ...) but
# positive_data_acceptance, which is left out: the document states each field's type and range, not the
# rules across fields the service enforces with a 400 (maxHeight or maxBitrate, not both; one of
# relative and absolute; volume or mute), and example sources do not exist here (422).
status=0
"$venv/bin/st" --config-file "$work/schemathesis.toml" run docs/openapi.json --url "http://127.0.0.1:$port" --exclude-path /events \
  --phases examples,coverage,fuzzing --checks all --exclude-checks positive_data_acceptance \
  --max-examples "${SCANOUT_FUZZ_EXAMPLES:-20}" --max-time "${SCANOUT_FUZZ_SECONDS:-150}" \
  --request-timeout 10 --workers 1 --seed 34 --no-color "$@" || status=$?
if ! kill -0 "$pid" 2>/dev/null; then
  echo "api-fuzz: scanout serve died during the run:" >&2
  tail -n 30 "$work/serve.log" >&2
  exit 1
fi
if ((status != 0)); then
  echo "api-fuzz: schemathesis reported findings (exit $status); the service's log ends:" >&2
  tail -n 20 "$work/serve.log" >&2
fi
exit $status
