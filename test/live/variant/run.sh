#!/usr/bin/env bash
# run.sh - the live suite against a VARIANT Odoo 19: a second server, beside the shared one, with
# more modules (x_more, beside this script), other demo data and more databases (README, "Live
# suite", "The variant check"). It shows that `npm run test:live` passes on an Odoo 19 that is not
# the one it was tuned on (issue 23: "passes against an Odoo 19 with contacts and mail installed
# and four databases"). The shared trimmed source cannot install `contacts` or `mail` (its
# TRIMMED.md), so x_more imitates what they add to res.partner and res.users.
#
#   sudo test/live/variant/run.sh              build/start, run the live suite, stop the server
#   sudo test/live/variant/run.sh --keep       ... and leave the variant server running
#   sudo test/live/variant/run.sh --no-test    build/start only (implies --keep)
#   sudo test/live/variant/run.sh --print-env  build/start only, `export ERP_LIVE_*=...` on stdout
#   sudo test/live/variant/run.sh --stop       stop the variant server, nothing else
#   sudo test/live/variant/run.sh [--keep] -- test/live/v1-matrix.test.ts   (vitest arguments)
#
# Needs: root, and ../shared/odoo19/start.sh run once on this machine (it installs the packages,
# extracts the source to $ODOO_SRC, runs PostgreSQL and makes the `odoo` role). This script never
# touches that server (8069), the Odoo 18 one (8018) or their databases (erp_a, erp_b, erp18_a,
# erp18_b): it has its own port, state dir, config, filestore and databases. Idempotent like
# start.sh: databases already built (stamped with what they were built from) and keys still valid
# are reused. Progress goes to stderr; keys are never printed (except with --print-env, on
# stdout, for `eval`); on any failure it says what failed and exits non-zero.
#
# Databases (all on the shared PostgreSQL cluster, all listed by the variant server, as are the
# cluster's other databases, so `/web/database/list` has 8 or more entries):
#   ${VARIANT_DB}_a  demo data, base,web,rpc,api_doc + x_more  ERP_LIVE_DB  (limited user, 4 keys)
#   ${VARIANT_DB}_b  no demo,   base,web,rpc,api_doc + x_more  ERP_LIVE_DB2 (admin key)
#   ${VARIANT_DB}_c  demo data, base,web,rpc,api_doc           (listed only)
#   ${VARIANT_DB}_d  no demo,   base,web,rpc,api_doc           (listed only)
#
# Knobs (environment):
#   VARIANT_PORT=8070                        HTTP port, on 127.0.0.1 only (not 8069 or 8018)
#   VARIANT_STATE=/var/lib/erp-odoo19-variant  odoo.conf, odoo.log, odoo.pid, keys.json, live.env
#                                            (0600), init-*.log, addons/ (x_more's copy), data/
#   VARIANT_DB=erp_variant                   database name prefix (_a, _b, _c, _d)
#   VARIANT_RESET=1                          drop and rebuild the four variant databases
#   VARIANT_NEW_KEYS=1                       make new API keys
#   ODOO_SRC=/var/cache/erp-odoo19/src       the source start.sh extracted
#   ODOO_DB_USER=odoo ODOO_DB_PASSWORD=odoo  start.sh's PostgreSQL role
#   PG_VERSION=15 PG_CLUSTER=main PGPORT=<that cluster's port>   as for start.sh
#   ODOO_PYTHON=/usr/bin/python3
#
# Time (2-core machine, measured): see docs/development.md, "The variant check".
set -euo pipefail
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
SRC=${ODOO_SRC:-/var/cache/erp-odoo19/src}
STATE=${VARIANT_STATE:-/var/lib/erp-odoo19-variant}
PORT=${VARIANT_PORT:-8070}
PREFIX=${VARIANT_DB:-erp_variant}
DB_USER=${ODOO_DB_USER:-odoo}
DB_PASS=${ODOO_DB_PASSWORD:-odoo}
PY=${ODOO_PYTHON:-/usr/bin/python3}
PG_VERSION=${PG_VERSION:-15}
PG_CLUSTER=${PG_CLUSTER:-main}
BASE_MODULES=base,web,rpc,api_doc   # what ../shared/odoo19/start.sh installs
CONF=$STATE/odoo.conf
LOG=$STATE/odoo.log
PIDF=$STATE/odoo.pid
KEYS=$STATE/keys.json
LIVE_ENV=$STATE/live.env
DATA=$STATE/data
ADDONS_DIR=$STATE/addons
STAMP='erp-proxy variant run.sh'   # COMMENT ON DATABASE marker: databases this script built
SHARED_DBS=' erp_a erp_b erp18_a erp18_b '

say() { printf '[variant] %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }
T0=$SECONDS

keep=0 run_tests=1 print_env=0 stop_only=0
vitest_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=1 ;;
    --no-test) run_tests=0 keep=1 ;;
    --print-env) print_env=1 run_tests=0 keep=1 ;;
    --stop) stop_only=1 ;;
    --) shift; vitest_args=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift
done

[ "$(id -u)" = 0 ] || die "run as root (like ../shared/odoo19/start.sh: Odoo's files and PostgreSQL)"
[[ $PREFIX =~ ^[a-z_][a-z0-9_]*$ ]] || die "VARIANT_DB='$PREFIX': use lower-case letters, digits and _ only"
[[ $PORT =~ ^[0-9]+$ ]] || die "VARIANT_PORT='$PORT' is not a port number"
case $PORT in 8069|8018) die "VARIANT_PORT=$PORT is a shared server's port: choose another" ;; esac
DB_A=${PREFIX}_a DB_B=${PREFIX}_b DB_C=${PREFIX}_c DB_D=${PREFIX}_d
for db in "$DB_A" "$DB_B" "$DB_C" "$DB_D"; do
  [[ $SHARED_DBS != *" $db "* ]] || die "VARIANT_DB='$PREFIX' would use the shared database $db"
done
mkdir -p "$STATE" "$DATA"
chmod 700 "$STATE"
# One run.sh at a time per state dir. What may leave a daemon behind (Odoo) runs with fd 9 closed.
exec 9>"$STATE/.lock"
flock -w 600 9 || die "another run.sh holds $STATE/.lock (for 10 minutes now)"

# ------------------------------------------------------------------ our server's pid
ours_running() {  # the pid in $PIDF, when its command line names our config
  local pid cmd
  pid=$(cat "$PIDF" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  cmd=$(tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline") || return 1
  [[ $cmd == *"odoo-bin -c $CONF "* ]]
}
stop_ours() {
  local pid
  if ! ours_running; then rm -f "$PIDF"; return 0; fi
  pid=$(cat "$PIDF")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then say "pid $pid ignored SIGTERM for 30 s: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$PIDF"
  say "stopped the variant Odoo (pid $pid)"
}
if [ $stop_only = 1 ]; then
  if ours_running; then stop_ours; else say "no variant Odoo from $STATE is running"; fi
  exit 0
fi
# Without --keep, our server is stopped however the run ends (a failure included).
on_exit() { if [ $keep = 0 ]; then stop_ours; fi; }
trap on_exit EXIT
port_busy() { "$PY" -c 'import socket,sys; s=socket.socket(); s.settimeout(1); sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0 else 1)' "$PORT"; }
if port_busy && ! { ours_running && grep -qx "http_port = $PORT" "$CONF" 2>/dev/null; }; then
  die "port $PORT on 127.0.0.1 is taken by a process this script did not start (set VARIANT_PORT)"
fi

# ------------------------------------------------------------------ source (start.sh's)
[ -f "$SRC/odoo-bin" ] && [ -f "$SRC/odoo/addons/base/__manifest__.py" ] \
  || die "no Odoo 19 source in $SRC: run ../shared/odoo19/start.sh first (or set ODOO_SRC)"
VERSION=$(cd "$SRC" && "$PY" odoo-bin --version 2>/dev/null) || die "odoo-bin --version failed with $PY"
[[ $VERSION == *" 19."* ]] || die "$SRC is not an Odoo 19 ($VERSION)"
src_sum=$(cat "$SRC/.archive-sha256" 2>/dev/null || echo unknown)

# x_more is copied into the state dir (the running server never reads the checkout), and its
# files' digest is part of each database's stamp: a changed module rebuilds the databases.
[ -f "$HERE/x_more/__manifest__.py" ] || die "x_more not found beside $0"
mod_sum=$(cd "$HERE" && find x_more -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 | LC_ALL=C sort -z \
  | xargs -0 sha256sum | sha256sum | cut -c1-16)
need_restart=0
if [ "$(cat "$ADDONS_DIR/.x_more-sum" 2>/dev/null)" != "$mod_sum" ]; then
  rm -rf "$ADDONS_DIR.tmp"; mkdir -p "$ADDONS_DIR.tmp"
  cp -R "$HERE/x_more" "$ADDONS_DIR.tmp/x_more" || die "cannot copy x_more into $ADDONS_DIR"
  find "$ADDONS_DIR.tmp" -name __pycache__ -prune -exec rm -rf {} +
  echo "$mod_sum" > "$ADDONS_DIR.tmp/.x_more-sum"
  if ours_running; then stop_ours; fi
  rm -rf "$ADDONS_DIR"; mv "$ADDONS_DIR.tmp" "$ADDONS_DIR"
  need_restart=1
fi
say "source: $SRC ($VERSION); x_more $mod_sum"

# ------------------------------------------------------------------ PostgreSQL (start.sh's cluster)
if [ -z "${PGPORT:-}" ]; then
  command -v pg_lsclusters >/dev/null || die "pg_lsclusters missing: run ../shared/odoo19/start.sh first"
  PGPORT=$(pg_lsclusters -h 2>/dev/null | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1==v && $2==c {print $3}')
  [ -n "$PGPORT" ] || die "no PostgreSQL cluster $PG_VERSION/$PG_CLUSTER: run ../shared/odoo19/start.sh first"
fi
export PGHOST=127.0.0.1 PGPORT PGUSER=$DB_USER PGPASSWORD=$DB_PASS
unset PGDATABASE PGSERVICE PGOPTIONS
q() { psql -X -Atq -v ON_ERROR_STOP=1 "$@"; }
q -d postgres -c 'select 1' >/dev/null 2>&1 \
  || die "cannot connect as $DB_USER to 127.0.0.1:$PGPORT: run ../shared/odoo19/start.sh first (it starts PostgreSQL and makes the role)"

# ------------------------------------------------------------------ config
newconf=$(cat <<EOF
[options]
addons_path = $SRC/addons,$SRC/odoo/addons,$ADDONS_DIR
data_dir = $DATA
db_host = 127.0.0.1
db_port = $PGPORT
db_user = $DB_USER
db_password = $DB_PASS
admin_passwd = admin
http_interface = 127.0.0.1
http_port = $PORT
workers = 0
max_cron_threads = 0
list_db = True
dbfilter =
proxy_mode = False
EOF
)
if [ "$(cat "$CONF" 2>/dev/null)" != "$newconf" ]; then
  if ours_running; then stop_ours; fi
  printf '%s\n' "$newconf" > "$CONF"; chmod 600 "$CONF"
  need_restart=1
fi
ODOO=("$PY" "$SRC/odoo-bin")

# ------------------------------------------------------------------ databases (one at a time)
db_exists() { q -d postgres -c "select 1 from pg_database where datname='$1'" | grep -q 1; }
db_comment() { q -d postgres -c "select coalesce(shobj_description(oid, 'pg_database'), '') from pg_database where datname='$1'"; }
db_ok() {  # $1 db, $2 modules, $3 t/f demo, $4 stamp
  local n
  [ "$(db_comment "$1")" = "$4" ] || return 1
  n=$(q -d "$1" -c "select count(*) from ir_module_module where name = any(string_to_array('$2', ',')) and state='installed'" 2>/dev/null) || return 1
  [ "$n" = "$(tr ',' '\n' <<<"$2" | wc -l)" ] || return 1
  [ "$(q -d "$1" -c "select demo from ir_module_module where name='base'" 2>/dev/null)" = "$3" ]
}
ensure_db() {  # $1 db, $2 t/f demo, $3 modules
  local db=$1 demo=$2 modules=$3 flag comment why stamp t
  stamp="$STAMP $src_sum $modules demo=$demo"
  [[ ,$modules, != *,x_more,* ]] || stamp="$STAMP $src_sum x_more=$mod_sum $modules demo=$demo"
  if [ "${VARIANT_RESET:-0}" != 1 ] && db_ok "$db" "$modules" "$demo" "$stamp"; then say "database $db ok"; return; fi
  local building=$STATE/building-$db
  if db_exists "$db"; then
    comment=$(db_comment "$db")
    if [ "${VARIANT_RESET:-0}" = 1 ]; then why=VARIANT_RESET=1
    elif [[ $comment == "$STAMP "* ]]; then
      if [ "$comment" != "$stamp" ]; then why='built from another source, module or module list'; else why='incomplete'; fi
    elif [ -f "$building" ]; then why='left half-built by an interrupted run'
    else
      die "database $db exists but was not built by this script: drop it, or choose another VARIANT_DB prefix"
    fi
    if ours_running; then stop_ours; fi
    say "dropping database $db ($why)"
    dropdb --if-exists "$db" || die "cannot drop $db (still in use?)"
  fi
  rm -rf "${DATA:?}/filestore/$db"
  if ours_running; then stop_ours; fi
  need_restart=1
  if [ "$demo" = t ]; then flag=--with-demo; else flag=--without-demo; fi
  say "building database $db ($modules, $flag), log $STATE/init-$db.log (20-90 s)"
  t=$SECONDS
  : > "$building"
  (cd "$SRC" && "${ODOO[@]}" -c "$CONF" -d "$db" -i "$modules" $flag --stop-after-init --no-http \
      --max-cron-threads=0 --logfile="$STATE/init-$db.log" 9>&-) \
    || die "building $db failed, see $STATE/init-$db.log"
  q -d postgres -c "COMMENT ON DATABASE \"$db\" IS '$stamp'" || die "cannot mark $db"
  rm -f "$building"
  db_ok "$db" "$modules" "$demo" "$stamp" || die "database $db is not in the expected state, see $STATE/init-$db.log"
  say "built $db in $((SECONDS - t)) s"
}
ensure_db "$DB_A" t "$BASE_MODULES,x_more"
ensure_db "$DB_B" f "$BASE_MODULES,x_more"
ensure_db "$DB_C" t "$BASE_MODULES"
ensure_db "$DB_D" f "$BASE_MODULES"

# ------------------------------------------------------------------ users and API keys (start.sh's way)
run_keys() {  # $1 db, $2 with extras (0/1); prints the JSON of keys.py's KEYS_JSON_OUT line
  local res
  res=$(cd "$SRC" && KEYS_JSON="$KEYS" WITH_EXTRAS=$2 NEW_KEYS=${VARIANT_NEW_KEYS:-0} \
        "${ODOO[@]}" shell -c "$CONF" -d "$1" --no-http --max-cron-threads=0 --log-level=warn \
        < "$HERE/keys.py" 2>>"$STATE/shell.log" 9>&-) \
    || die "odoo shell on $1 failed, see $STATE/shell.log"
  grep -v '^KEYS_JSON_OUT=' <<<"$res" | grep -v '^\s*$' | sed 's/^/  /' >&2 || true
  grep '^KEYS_JSON_OUT=' <<<"$res" | tail -1 | sed 's/^KEYS_JSON_OUT=//'
}
a_json=$(run_keys "$DB_A" 1)
b_json=$(run_keys "$DB_B" 0)
[ -n "$a_json" ] && [ -n "$b_json" ] || die "could not obtain the API keys (see $STATE/shell.log)"
# The keys go through the environment, not argv: another local user can read argv in `ps`.
A_JSON="$a_json" B_JSON="$b_json" "$PY" - "$KEYS" "$DB_A" "$DB_B" <<'EOF' || die "cannot write $KEYS"
import json, os, sys
path, db_a, db_b = sys.argv[1], sys.argv[2], sys.argv[3]
a, b = json.loads(os.environ['A_JSON']), json.loads(os.environ['B_JSON'])
order_a = ['admin_uid', 'admin_rpc', 'limited_uid', 'limited_rpc', 'admin_expired', 'admin_any']
data = {db_a: {k: a[k] for k in order_a}, db_b: {k: b[k] for k in ['admin_uid', 'admin_rpc']}}
tmp = path + '.tmp'
fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
with os.fdopen(fd, 'w') as f:
    json.dump(data, f, indent=2)
    f.write('\n')
os.replace(tmp, path)
EOF
unset a_json b_json
say "keys in $KEYS (0600)"

# ------------------------------------------------------------------ server
URL=http://127.0.0.1:$PORT
if ours_running && [ "$need_restart" = 1 ]; then stop_ours; fi
if ! ours_running; then
  port_busy && die "port $PORT on 127.0.0.1 is taken by a process this script did not start (set VARIANT_PORT)"
  say "starting the variant Odoo on $URL (log $LOG)"
  cd "$SRC"
  setsid nohup "${ODOO[@]}" -c "$CONF" --pidfile="$PIDF" >>"$LOG" 2>&1 </dev/null 9>&- &
  echo $! > "$PIDF"
  cd - >/dev/null
else
  say "variant Odoo already running (pid $(cat "$PIDF")), left as is"
fi
ok=0
for i in $(seq 120); do
  if "$PY" -c 'import json,sys,urllib.request as u; json.load(u.urlopen(sys.argv[1], timeout=2))' "$URL/web/version" 2>/dev/null; then ok=1; break; fi
  [ "$i" -lt 5 ] || ours_running || break
  sleep 1
done
[ "$ok" = 1 ] || die "the variant Odoo did not answer $URL/web/version; tail of $LOG:
$(tail -n 20 "$LOG" 2>/dev/null)"

# ------------------------------------------------------------------ the exports (file), and a check of the variant
# live.env (0600) holds `KEY=value` lines for `set -a; . live.env`; the keys are read from
# keys.json here and go nowhere else.
"$PY" - "$KEYS" "$LIVE_ENV" "$URL" "$DB_A" "$DB_B" <<'EOF' || die "cannot write $LIVE_ENV"
import json, os, sys
keys_path, out, url, db_a, db_b = sys.argv[1:]
k = json.load(open(keys_path))
a, b = k[db_a], k[db_b]
lines = [('URL', url), ('DB', db_a), ('UID', a['admin_uid']), ('KEY', a['admin_rpc']),
         ('LIMITED_UID', a['limited_uid']), ('LIMITED_KEY', a['limited_rpc']),
         ('EXPIRED_KEY', a['admin_expired']), ('DB2', db_b), ('KEY2', b['admin_rpc'])]
tmp = out + '.tmp'
fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
with os.fdopen(fd, 'w') as f:
    for name, value in lines:
        f.write("ERP_LIVE_%s='%s'\n" % (name, value))
os.replace(tmp, out)
EOF
# The variant is what it claims: x_more's fields on res.partner over JSON-2, its extra demo
# partners in the main database, and the four variant databases in the server's database list.
check=$(set -a; . "$LIVE_ENV"; set +a; "$PY" - "$DB_A" "$DB_B" "$DB_C" "$DB_D" <<'EOF' 2>&1
import json, os, sys, urllib.request as u
url, db, key = os.environ['ERP_LIVE_URL'], os.environ['ERP_LIVE_DB'], os.environ['ERP_LIVE_KEY']
def post(path, body, auth=True):
    headers = {'Content-Type': 'application/json'}
    if auth:
        headers.update({'Authorization': 'bearer ' + key, 'X-Odoo-Database': db})
    req = u.Request(url + path, data=json.dumps(body).encode(), method='POST', headers=headers)
    return json.load(u.urlopen(req, timeout=60))
fields = post('/json/2/res.partner/fields_get', {'attributes': ['type']})
missing = [f for f in ('message_ids', 'activity_state', 'email_normalized', 'x_more_note') if f not in fields]
assert not missing, 'x_more fields missing on res.partner: %s' % missing
n = post('/json/2/res.partner/search_count', {'domain': [['name', '=', 'Nordlicht Möbel GmbH']]})
assert n == 1, 'x_more demo partner not found in %s' % db
dbs = post('/web/database/list', {'jsonrpc': '2.0', 'method': 'call', 'params': {}}, auth=False)['result']
absent = [d for d in sys.argv[1:] if d not in dbs]
assert not absent, 'not in /web/database/list: %s' % absent
print('%d fields on res.partner, %d databases listed' % (len(fields), len(dbs)))
EOF
) || die "the variant check failed: $check"
say "variant ready in $((SECONDS - T0)) s: $URL, $DB_A (demo + x_more), $DB_B (x_more), $DB_C (demo), $DB_D; $check; pid $(cat "$PIDF")"
say "exports in $LIVE_ENV (0600): ERP_LIVE_URL=$URL ERP_LIVE_DB=$DB_A ERP_LIVE_DB2=$DB_B, UIDs and keys (not shown)"

if [ $print_env = 1 ]; then
  sed "s/^/export /" "$LIVE_ENV"
  exit 0
fi
if [ $run_tests = 0 ]; then
  say "not running the live suite (--no-test); the server is left running (stop: $0 --stop)"
  say "to run it yourself: (unset \$(compgen -e | grep ^ERP_LIVE); set -a; . $LIVE_ENV; set +a; npm run test:live)"
  exit 0
fi

# ------------------------------------------------------------------ the live suite, ERP_LIVE_* only
[ -d "$REPO/node_modules" ] || die "no node_modules in $REPO: run npm ci first"
say "npm run test:live against the variant only (every other ERP_LIVE*/ERP_LIVE18_* unset)"
t=$SECONDS
set +e
(
  for v in $(compgen -e | grep '^ERP_LIVE' || true); do unset "$v"; done
  set -a; . "$LIVE_ENV"; set +a
  cd "$REPO" && npm run --silent test:live -- "${vitest_args[@]}" 9>&-
) >&2
rc=$?
set -e
say "live suite against the variant: exit $rc, $((SECONDS - t)) s"
if [ $keep = 1 ]; then say "variant Odoo left running on $URL (--keep; stop: $0 --stop)"; fi
say "done in $((SECONDS - T0)) s"
[ $rc = 0 ] || die "the live suite failed against the variant (exit $rc)"
