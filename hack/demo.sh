#!/usr/bin/env bash
# hack/demo.sh - the README's main job for now: build tapir, serve a page on
# the sandboxed host, and fetch it through tapir from a new rootless
# namespace, as an unprivileged user.
#
# Everything runs inside hack/sandbox.sh (a throwaway network namespace that
# plays "the host"); the page is fetched via 10.0.2.2, which tapir maps to
# the host's 127.0.0.1. Needs root for the set-up (packages, test user,
# sandbox); the fetch itself runs unprivileged.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if [[ "${1:-}" != --in-sandbox ]]; then
	if ((EUID != 0)); then
		echo "hack/demo.sh: needs root for set-up (try: sudo hack/demo.sh)" >&2
		exit 1
	fi
	hack/install-deps.sh
	hack/test-user.sh
	make -j"$(nproc)" tapir
	exec hack/sandbox.sh "$0" --in-sandbox
fi

user=${TAPIR_TEST_USER:-tapirtest}
work=$(mktemp -d "${TMPDIR:-/tmp}/tapir-demo.XXXXXX")
chmod 0755 "$work"
install -m 0755 tapir "$work/tapir"
nginx_pid=
cleanup() {
	[[ -n "$nginx_pid" ]] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/www" "$work/nginx"
echo "Hello from the sandboxed host, served by nginx, fetched through tapir." >"$work/www/index.html"
cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $work/nginx;
	proxy_temp_path $work/nginx;
	fastcgi_temp_path $work/nginx;
	uwsgi_temp_path $work/nginx;
	scgi_temp_path $work/nginx;
	server { listen 127.0.0.1:8080; root $work/www; }
}
CONF
nginx -c "$work/nginx/nginx.conf" </dev/null >"$work/nginx/out.log" 2>&1 &
nginx_pid=$!
for _ in $(seq 50); do
	curl -s -o /dev/null http://127.0.0.1:8080/ && break
	sleep 0.1
done

echo "== as user $user: tapir run -- curl http://10.0.2.2:8080/"
setpriv --reuid="$user" --regid="$user" --init-groups \
	"$work/tapir" run -- curl -sS --max-time 10 http://10.0.2.2:8080/
