# Sourced by scripts/browser-test.sh and scripts/bench-serve.sh (bash):
#   start_server NAME BIN DB OUT
# starts `BIN serve --db DB --addr 127.0.0.1:0` in the background, its
# standard output in OUT/server.out and its log in OUT/server.log, and sets
# SERVER to its process id and URL to the address it announced. A server
# that exits, or announces nothing within 10 s, stops the calling script
# (NAME in the message) with exit 2 and the end of its log. The caller
# stops the server (kill $SERVER) when done.
start_server() {
  local name=$1 bin=$2 db=$3 out=$4
  # Emptied here, not by the redirection below: that runs in the background
  # job, and the first grep could read the address of an earlier server
  # (gone) before it did.
  : > "$out/server.out"
  "$bin" serve --db "$db" --addr 127.0.0.1:0 > "$out/server.out" 2> "$out/server.log" &
  SERVER=$!
  for _ in $(seq 100); do
    URL=$(grep -o 'http://[0-9.:]*/' "$out/server.out") && return 0
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.1
  done
  kill "$SERVER" 2>/dev/null || true
  echo "$name: the server did not start (its log, $out/server.log, ends:)" >&2
  tail -n 3 "$out/server.log" >&2
  exit 2
}
