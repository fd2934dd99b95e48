#!/usr/bin/env bash
# Makes a private certificate authority (CA) for a store or a chain, and the certificates its brokers need, with openssl.
#
#   deploy/make-certificates.sh [--out DIR] [--days N] [--client NAME]... [--dashboard HOST]... [HOST...]
#
#   HOST...        the names and IP addresses clients use to reach this broker (e.g. broker.store1.example 192.168.1.10):
#                  makes broker.pem + broker.key, a server certificate for exactly those names
#   --client NAME  makes NAME.pem + NAME.key, a client certificate with CN=NAME (e.g. bridge-store-1, for a
#                  store broker's bridge to head office); repeatable
#   --dashboard HOST  makes dashboard.pem + dashboard.key, the web dashboard's HTTPS certificate for the names and
#                  addresses browsers use (beacon-dashboard --tls-cert/--tls-key); repeatable, one certificate for all
#   --out DIR      where everything goes (default /etc/beaconmesh/tls)
#   --days N       how long the broker and client certificates are valid (default 825; the CA: 10 years)
#
# The CA (ca.pem, ca.key) is made on the first run and reused afterwards, so one CA can sign every store's broker
# and bridge: run the script again on the same folder to add certificates. ca.pem goes to every client (their
# --cafile / cafile:); keep ca.key secret, ideally off the broker once the certificates are made.
set -euo pipefail

out=/etc/beaconmesh/tls
days=825
clients=()
hosts=()
dashboard_hosts=()
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || usage; out="$2"; shift 2 ;;
    --days) [ $# -ge 2 ] || usage; days="$2"; shift 2 ;;
    --client) [ $# -ge 2 ] || usage; clients+=("$2"); shift 2 ;;
    --dashboard) [ $# -ge 2 ] || usage; dashboard_hosts+=("$2"); shift 2 ;;
    -h|--help) usage ;;
    -*) echo "make-certificates: unknown option $1" >&2; usage ;;
    *) hosts+=("$1"); shift ;;
  esac
done
[ ${#hosts[@]} -gt 0 ] || [ ${#clients[@]} -gt 0 ] || [ ${#dashboard_hosts[@]} -gt 0 ] ||
  { echo "make-certificates: name at least one HOST, --client or --dashboard" >&2; usage; }
[[ "$days" =~ ^[0-9]+$ ]] || { echo "make-certificates: --days must be a number of days" >&2; exit 2; }
command -v openssl >/dev/null || { echo "make-certificates: openssl is missing (apt-get install openssl)" >&2; exit 1; }

umask 077
mkdir -p "$out"
cd "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ ! -f ca.pem ] || [ ! -f ca.key ]; then
  openssl req -x509 -newkey rsa:3072 -nodes -days 3650 -subj "/CN=BeaconMesh private CA ($(hostname -s 2>/dev/null || echo local))" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout ca.key -out ca.pem 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
  echo "made the CA: $out/ca.pem (give it to every client) and $out/ca.key (keep it secret)"
else
  echo "using the existing CA in $out"
fi

# sign NAME CN EXTENSIONS: a 2048-bit key NAME.key and NAME.pem signed by the CA.
sign() {
  local name="$1" cn="$2" extensions="$3"
  printf '%s\n' "$extensions" > "$work/$name.ext"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$cn" -keyout "$name.key" -out "$work/$name.csr" 2>"$work/log" \
    && openssl x509 -req -in "$work/$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$days" \
         -extfile "$work/$name.ext" -out "$name.pem" 2>"$work/log" \
    || { cat "$work/log" >&2; exit 1; }
  chmod 644 "$name.pem"
  chmod 600 "$name.key"
}

# alt_names HOST...: the subjectAltName value for these names and addresses.
alt_names() {
  local san="" entry host
  for host in "$@"; do
    if [[ "$host" =~ ^[0-9.]+$ || "$host" == *:* ]]; then entry="IP:$host"; else entry="DNS:$host"; fi
    san="${san:+$san,}$entry"
  done
  printf '%s' "$san"
}

if [ ${#hosts[@]} -gt 0 ]; then
  san="$(alt_names "${hosts[@]}")"
  sign broker "${hosts[0]}" "subjectAltName=$san
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth"
  # mosquitto drops root privileges and must still read its key.
  if [ "$(id -u)" -eq 0 ] && getent group mosquitto >/dev/null; then
    chgrp mosquitto broker.key && chmod 640 broker.key
  fi
  echo "made the broker certificate for ${hosts[*]}: $out/broker.pem, $out/broker.key"
fi

if [ ${#dashboard_hosts[@]} -gt 0 ]; then
  sign dashboard "${dashboard_hosts[0]}" "subjectAltName=$(alt_names "${dashboard_hosts[@]}")
basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth"
  # The dashboard runs as the beaconmesh user and must read its key.
  if [ "$(id -u)" -eq 0 ] && getent group beaconmesh >/dev/null; then
    chgrp beaconmesh dashboard.key && chmod 640 dashboard.key
  fi
  echo "made the dashboard certificate for ${dashboard_hosts[*]}: $out/dashboard.pem, $out/dashboard.key"
fi

for client in "${clients[@]}"; do
  [[ "$client" =~ ^[A-Za-z0-9._-]{1,64}$ ]] || { echo "make-certificates: client name '$client' must be 1-64 of A-Z a-z 0-9 . _ -" >&2; exit 2; }
  sign "$client" "$client" "basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
  if [ "$(id -u)" -eq 0 ] && getent group mosquitto >/dev/null; then
    chgrp mosquitto "$client.key" && chmod 640 "$client.key"
  fi
  echo "made the client certificate $out/$client.pem, $out/$client.key (CN=$client)"
done
chmod 755 "$out"
chmod 644 ca.pem
echo "Next: point the broker at them (deploy/broker/mosquitto-production.conf reads /etc/beaconmesh/tls) and give ca.pem to clients."
