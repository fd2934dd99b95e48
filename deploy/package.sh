#!/usr/bin/env bash
# Builds the release programs with the Swift runtime linked in (--static-swift-stdlib) and writes two Debian packages:
#   beaconmesh-scanner_<version>_<arch>.deb   a department node: beacon-scanner, its systemd unit, the example config
#   beaconmesh-server_<version>_<arch>.deb    the back office: beacon-coordinator, beacon-dashboard, beacon-monitor,
#                                             their units, the examples
#
#   deploy/package.sh [--out DIR] [--swift-sdk SDK] [--package-version VERSION] [--scratch-path DIR]
#                     [--compression xz|gzip]
#   deploy/package.sh --print-version
#
#   --out DIR                  where the packages go (default .build/packages; older BeaconMesh packages of the
#                              same architecture there are removed)
#   --swift-sdk SDK            cross-compile with this Swift SDK (e.g. for arm64, a 64-bit Raspberry Pi); the build box
#                              needs the target's libraries as multiarch packages (dpkg --add-architecture arm64;
#                              apt-get install libbluetooth3:arm64 libmosquitto1:arm64 ...) for dpkg-shlibdeps
#   --package-version VERSION  the package version instead of the one worked out below (e.g. to test an upgrade)
#   --scratch-path DIR         build there instead of .build (BEACONMESH_PACKAGE_SCRATCH sets the default): a build
#                              folder of its own does not wait on the lock of a `swift test` running at the same time
#   --compression xz|gzip      xz (the default: the smallest package) or gzip (5 times faster to make, half again as
#                              large): the tests' packages
#   --print-version            print the version the packages would have, build nothing
#
# The version is BeaconMeshVersion.current, then +git<commit time>.<commit>, then +dirty when the work tree has
# uncommitted changes (a package is never silently built from something no commit holds). Installed with
# `apt install ./FILE.deb` the packages need no Swift toolchain; their Depends are what the programs link
# (dpkg-shlibdeps) and what the maintainer scripts use (adduser). Needs dpkg-dev (deploy/install-deps.sh package).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$repo/.build/packages"
sdk=""
version=""
scratch="${BEACONMESH_PACKAGE_SCRATCH:-}"
compression=xz
print_version=false
usage() {
  echo "package: $1 (usage: deploy/package.sh [--out DIR] [--swift-sdk SDK] [--package-version VERSION]" \
    "[--scratch-path DIR] [--compression xz|gzip])" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || usage "--out needs a folder"; out="$2"; shift 2 ;;
    --swift-sdk) [ $# -ge 2 ] || usage "--swift-sdk needs an SDK name"; sdk="$2"; shift 2 ;;
    --package-version) [ $# -ge 2 ] || usage "--package-version needs a version"; version="$2"; shift 2 ;;
    --scratch-path) [ $# -ge 2 ] || usage "--scratch-path needs a folder"; scratch="$2"; shift 2 ;;
    --compression)
      [ $# -ge 2 ] && { [ "$2" = xz ] || [ "$2" = gzip ]; } || usage "--compression is xz or gzip"
      compression="$2"; shift 2 ;;
    --print-version) print_version=true; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown argument $1" ;;
  esac
done
if [ -n "$version" ] && ! [[ "$version" =~ ^[0-9][A-Za-z0-9.+~]*$ ]]; then
  usage "--package-version $version is not a Debian version (digits first, then letters, digits, . + ~)"
fi
for tool in dpkg-deb dpkg-shlibdeps readelf; do
  command -v "$tool" >/dev/null || { echo "package: $tool is missing; run deploy/install-deps.sh package" >&2; exit 1; }
done
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if [ -n "$scratch" ]; then mkdir -p "$scratch" && scratch="$(cd "$scratch" && pwd)"; fi

# 1. The version.
base="$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' "$repo/Sources/BeaconMeshService/BeaconMeshVersion.swift")"
if [ -z "$version" ]; then
  version="$base"
  if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
    version+="+git$(TZ=UTC git -C "$repo" log -1 --date=format-local:%Y%m%d%H%M%S --format=%cd).$(git -C "$repo" rev-parse --short=7 HEAD)"
    if [ -n "$(git -C "$repo" status --porcelain --untracked-files=normal -- . ':!.build' ':!.mesh')" ]; then
      version+="+dirty"
      echo "package: the work tree has uncommitted changes: version $version" >&2
    fi
  fi
fi

if $print_version; then echo "$version"; exit 0; fi

work="$(mktemp -d "${TMPDIR:-/tmp}/beaconmesh-package.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# 2. The programs, release, with the Swift runtime inside (the static Foundation's link warning about mktemp left out).
build=(swift build --package-path "$repo" -c release --static-swift-stdlib)
[ -n "$sdk" ] && build+=(--swift-sdk "$sdk")
[ -n "$scratch" ] && build+=(--scratch-path "$scratch")
for product in beacon-scanner beacon-coordinator beacon-dashboard beacon-monitor; do
  status=0
  "${build[@]}" --product "$product" > "$work/build.log" 2>&1 || status=$?
  grep -v -e "warning: the use of \`mktemp' is dangerous" -e '^/.*libFoundationEssentials.a' "$work/build.log" || true
  [ "$status" -eq 0 ] || { echo "package: swift build --product $product failed" >&2; exit 1; }
done
bin="$("${build[@]}" --show-bin-path)"
case "$(readelf -h "$bin/beacon-scanner" | sed -n 's/^ *Machine: *//p')" in
  *X86-64*) arch=amd64 ;;
  *AArch64*) arch=arm64 ;;
  *ARM*) arch=armhf ;;
  *) echo "package: cannot tell the architecture of $bin/beacon-scanner" >&2; exit 1 ;;
esac
strip=strip
if [ -n "$sdk" ] || [ "$arch" != "$(dpkg --print-architecture)" ]; then
  strip="$(command -v llvm-strip || command -v "$(dirname "$(readlink -f "$(command -v swift)")")/llvm-strip" || echo strip)"
fi

# licence FILE: prints a licence file for the copyright file; the Apache-2.0 text itself is named, not copied
# (Debian has it in /usr/share/common-licenses), and only what a file adds after it (an exception, notices) follows.
licence() {
  if grep -q "Apache License" "$1" && grep -q "Version 2.0, January 2004" "$1"; then
    echo "Apache-2.0: /usr/share/common-licenses/Apache-2.0. Added to it in this file:"
    awk 'NR == FNR { if (/limitations under the License\./) last = FNR; next } FNR > last' "$1" "$1"
  else
    cat "$1"
  fi
}

# notices PROGRAM...: the licences of what the programs have inside: every resolved package with a module in their
# symbols (a Swift module's mangled name, <length><Module>, or a C module's prefix, C<Name>_), once each.
notices() {
  local checkouts="${scratch:-$repo/.build}/checkouts" checkout module name
  : > "$work/patterns"
  for checkout in "$checkouts"/*/; do
    name="$(basename "$checkout")"
    # Modules live in Sources/<Module>, or (GRDB) in a top-level folder named after them.
    for module in $(find "$checkout" "$checkout/Sources" -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%f\n' 2>/dev/null); do
      case "$module" in Sources|Tests|Documentation|Scripts|Benchmarks|Examples|Plugins|docs|scripts) continue ;; esac
      printf '%s\t%s\n' "${#module}$module" "$name" >> "$work/patterns"
      [[ "$module" == C* ]] && printf '%s\t%s\n' "${module}_" "$name" >> "$work/patterns"
    done
  done
  local found
  found="$(for program in "$@"; do nm --defined-only "$program" 2>/dev/null | awk '{print $3}'; done \
    | grep -o -F -f <(cut -f1 "$work/patterns") | sort -u \
    | awk -F '\t' 'NR == FNR { seen[$1] = 1; next } seen[$1] { print $2 }' - "$work/patterns" | sort -u)"
  for name in $found; do
    checkout="$checkouts/$name/"
    echo
    echo "------------------------------------------------------------------------------"
    echo "$name $(git -C "$checkout" describe --tags --always 2>/dev/null || echo unknown) (statically linked)"
    echo "------------------------------------------------------------------------------"
    for file in "$checkout"LICENSE* "$checkout"NOTICE* "$checkout"Sources/*/LICENSE*; do
      [ -f "$file" ] || continue
      echo
      echo "== ${file#"$checkout"}"
      licence "$file"
    done
  done
}

# package NAME LICENCE DESCRIPTION PROGRAMS...: stages, checks and builds one .deb into $out.
package() {
  local name="$1" licence="$2" description="$3"
  shift 3
  local root="$work/$name" doc="$work/$name/usr/share/doc/$name" program
  install -d -m 755 "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$doc/examples"
  for program in "$@"; do
    install -m 755 "$bin/$program" "$root/usr/bin/$program"
  done

  # copyright: the project's licence, what each program has inside, and what it links dynamically.
  {
    echo "BeaconMesh: beacon scanners, coordinator and dashboard for stores."
    echo
    echo "Copyright: the BeaconMesh authors"
    echo
    if [ "$licence" = GPL-3.0-or-later ]; then
      cat <<'GPL'
License of this binary package: GPL-3.0-or-later.
  beacon-scanner links BlueZ's libbluetooth (GPL-2.0-or-later). BeaconMesh's own code is Apache-2.0, which can be
  combined with GPL-3.0 but not with GPL-2.0, so this package as a whole is distributed under the GNU General Public
  License, version 3 or (at your option) any later version: /usr/share/common-licenses/GPL-3. Its source is the
  BeaconMesh repository at the commit in this package's changelog; BeaconMesh's own files in it stay Apache-2.0.
GPL
    else
      echo "License of this binary package: Apache-2.0 (/usr/share/common-licenses/Apache-2.0)."
    fi
    echo
    echo "BeaconMesh's own code: Apache-2.0, /usr/share/common-licenses/Apache-2.0 (LICENSE in the repository)."
    echo
    echo "Licences inside the programs ($*):"
    echo "  Apache-2.0 with the Swift Runtime Library Exception: the Swift runtime, Foundation and Dispatch"
    echo "  Unicode-3.0 (ICU licence): ICU, inside Foundation's internationalisation (FoundationICU)"
    echo "  Apache-2.0, MIT (Expat) and others named below: the Swift packages the programs are built from"
    echo "  BoringSSL (inside swift-crypto and swift-nio-ssl, where linked): ISC, OpenSSL and SSLeay licences"
    echo "Linked dynamically (their own packages carry their copyright): libc6, libstdc++6, libgcc-s1, libssl3,"
    echo "  libmosquitto1 (EPL-2.0 or EDL-1.0), libjson-c5 (MIT)$([ "$licence" = GPL-3.0-or-later ] && echo ", libbluetooth3 (GPL-2.0-or-later)")."
    echo
    echo "------------------------------------------------------------------------------"
    echo "The Swift toolchain's runtime (Swift, Foundation, Dispatch)"
    echo "------------------------------------------------------------------------------"
    swift_licence="$(dirname "$(readlink -f "$(command -v swift)")")/../share/swift/LICENSE.txt"
    if [ -f "$swift_licence" ]; then licence "$swift_licence"; else echo "Apache-2.0 with the Runtime Library Exception"; fi
    if [ -f /usr/share/doc/libicu72/copyright ]; then
      echo
      echo "------------------------------------------------------------------------------"
      echo "ICU (Unicode-3.0 / ICU licence), as inside Foundation"
      echo "------------------------------------------------------------------------------"
      sed -n '/^License: ICU/,/^$/p' /usr/share/doc/libicu72/copyright | head -60
    fi
    notices "${@/#/$root/usr/bin/}"
  } > "$doc/copyright"
  for program in "$@"; do "$strip" --strip-unneeded "$root/usr/bin/$program"; done

  # changelog (native package: changelog.gz).
  {
    echo "beaconmesh ($version) stable; urgency=medium"
    echo
    echo "  * Built from commit $(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)."
    echo
    echo " -- BeaconMesh maintainers <maintainers@beaconmesh.example>  $(date -R -d "@${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}")"
  } | gzip -9n > "$doc/changelog.gz"
  chmod 644 "$doc/changelog.gz" "$doc/copyright"
  install -m 644 "$repo/README.md" "$doc/README.md"
  install -m 644 "$repo/deploy/README.md" "$doc/deployment.md"

  # Units as deploy/install.sh installs them, from /usr/bin, documented where the package puts the guide.
  local unit
  for unit in "${units[@]}"; do
    sed -e "s#/usr/local/bin/#/usr/bin/#g" -e "s#file:/usr/local/share/doc/beaconmesh/#file:/usr/share/doc/$name/#g" \
      "$repo/deploy/systemd/$unit" > "$root/lib/systemd/system/$unit"
    chmod 644 "$root/lib/systemd/system/$unit"
  done
  for example in "${examples[@]}"; do install -m 644 "$repo/deploy/$example" "$doc/examples/$(basename "$example")"; done
  # The config postinst puts under /etc/beaconmesh where none is (not from the docs: those may be left out by dpkg).
  install -D -m 644 "$repo/deploy/$template" "$root/usr/share/$name/$(basename "$template")"
  for tool in "${tools[@]}"; do install -D -m 755 "$repo/deploy/$tool" "$root/usr/share/$name/$(basename "$tool")"; done
  # What lintian would say of every program built this way, with the reason (deploy/debian/NAME.lintian-overrides).
  if [ -f "$repo/deploy/debian/$name.lintian-overrides" ]; then
    install -D -m 644 "$repo/deploy/debian/$name.lintian-overrides" "$root/usr/share/lintian/overrides/$name"
  fi

  # Maintainer scripts, from deploy/debian/<package>.<script>.
  local script
  for script in postinst prerm postrm; do
    [ -f "$repo/deploy/debian/$name.$script" ] && install -m 755 "$repo/deploy/debian/$name.$script" "$root/DEBIAN/$script"
  done

  # Depends: what the programs link (dpkg-shlibdeps, which works in a folder with a debian/control) and adduser.
  install -d "$work/shlibs/debian"
  printf 'Source: beaconmesh\n\nPackage: %s\nArchitecture: any\n' "$name" > "$work/shlibs/debian/control"
  local shlibs
  shlibs="$(cd "$work/shlibs" && dpkg-shlibdeps -O "${@/#/$root/usr/bin/}" 2>"$work/shlibdeps.log")" \
    || { cat "$work/shlibdeps.log" >&2; echo "package: dpkg-shlibdeps failed for $name" >&2; exit 1; }
  shlibs="${shlibs#shlibs:Depends=}"

  (cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
  chmod 644 "$root/DEBIAN/md5sums"
  local suggests_field=""
  [ -n "$suggests" ] && suggests_field=$'\n'"Suggests: $suggests"
  cat > "$root/DEBIAN/control" <<CONTROL
Package: $name
Source: beaconmesh
Version: $version
Architecture: $arch
Maintainer: BeaconMesh maintainers <maintainers@beaconmesh.example>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: adduser, $shlibs$suggests_field
Section: net
Priority: optional
Description: $description
CONTROL
  cat "$repo/deploy/debian/$name.description" >> "$root/DEBIAN/control"
  find "$root" -type d -exec chmod 755 {} +
  rm -f "$out/${name}"_*_"${arch}.deb"
  dpkg-deb --root-owner-group "-Z$compression" --build "$root" "$out/${name}_${version}_${arch}.deb" >/dev/null
  echo "$out/${name}_${version}_${arch}.deb"
}

units=("beacon-scanner@.service")
examples=(examples/scanner.yaml)
template=examples/scanner.yaml
tools=()
suggests=""
package beaconmesh-scanner GPL-3.0-or-later "BeaconMesh department node (Bluetooth LE beacons to MQTT)" beacon-scanner

units=(beacon-coordinator.service beacon-dashboard.service beaconmesh-registry-purge.service beaconmesh-registry-purge.timer)
examples=(examples/coordinator.yaml examples/two-servers/coordinator-a.yaml examples/two-servers/coordinator-b.yaml
          bridge/store-bridge.conf broker/mosquitto-production.conf)
template=examples/coordinator.yaml
# The store's broker and its certificates are the back office's too, but not every back office runs them: suggested.
tools=(make-certificates.sh)
suggests="mosquitto, openssl"
package beaconmesh-server Apache-2.0 "BeaconMesh back office (coordinator, web dashboard, monitor)" \
  beacon-coordinator beacon-dashboard beacon-monitor
