# Sourced by scripts/arm_test.sh and scripts/arm_memory.sh (not run on its
# own): a Rust 1.85 toolchain with the aarch64 and armv7 standard libraries,
# the cross C compilers `ring` needs, and qemu-user, all from Debian
# bookworm's archive, fetched through a private apt index and unpacked under
# target/arm. Nothing is installed into the system: /etc/apt, dpkg's
# database and the system's Rust toolchain are left as they are. The one
# system-wide change is two binfmt_misc entries (so that test binaries
# running under qemu can spawn the example binaries), registered here and
# removed again on exit by the caller's `arm_cleanup`.
#
# Sets: ARM_ROOT (the unpacked packages), PATH (Debian's rustc/cargo 1.85
# and the cross compilers first), LD_LIBRARY_PATH (their shared libraries),
# and per target the linker, C compiler and qemu runner cargo uses.

arm_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
arm_work=${ARM_WORK:-$arm_repo/target/arm}
ARM_ROOT=$arm_work/root
arm_apt=$arm_work/apt

# Host (amd64) packages, resolved against this machine's dpkg database so
# that only what is missing is fetched.
arm_host_pkgs=(rustc-web cargo-web gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf
  libc6-dev-arm64-cross libc6-dev-armhf-cross)
# The targets' standard libraries (.rlib files only; no dependencies needed).
arm_std_pkgs=(libstd-rust-web-dev:arm64 libstd-rust-web-dev:armhf)
# Statically linked emulators, so that the kernel can start them for any
# process (binfmt_misc) without a library path.
arm_qemu_pkg=qemu-user-static

arm_setup() {
  local stamp="$ARM_ROOT/.unpacked"
  local want="${arm_host_pkgs[*]} ${arm_std_pkgs[*]} $arm_qemu_pkg"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  rm -rf "$ARM_ROOT" "$arm_apt"
  mkdir -p "$arm_apt/lists/partial" "$arm_apt/cache/archives/partial" "$arm_apt/etc" "$ARM_ROOT"
  cat >"$arm_apt/etc/sources.list" <<'EOF'
deb [arch=amd64,arm64,armhf] http://deb.debian.org/debian bookworm main
deb [arch=amd64,arm64,armhf] http://deb.debian.org/debian bookworm-updates main
EOF
  local apt=(apt-get -q
    -o Dir::Etc::SourceList="$arm_apt/etc/sources.list"
    -o Dir::Etc::SourceParts=/nonexistent
    -o Dir::Etc::Preferences=/nonexistent -o Dir::Etc::PreferencesParts=/nonexistent
    -o Dir::State::Lists="$arm_apt/lists"
    -o Dir::Cache="$arm_apt/cache"
    -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 -o APT::Architectures::=armhf
    -o APT::Sandbox::User=root -o Debug::NoLocking=1)
  "${apt[@]}" update >"$arm_apt/update.log" 2>&1 || { cat "$arm_apt/update.log"; return 1; }
  "${apt[@]}" install --download-only -y --no-install-recommends "${arm_host_pkgs[@]}" \
    >"$arm_apt/install.log" 2>&1 || { cat "$arm_apt/install.log"; return 1; }
  (cd "$arm_apt/cache/archives" && "${apt[@]}" download "${arm_std_pkgs[@]}" "$arm_qemu_pkg") \
    >"$arm_apt/download.log" 2>&1 || { cat "$arm_apt/download.log"; return 1; }
  local deb
  for deb in "$arm_apt"/cache/archives/*.deb; do
    case "$deb" in
    */"$arm_qemu_pkg"_*)
      # Only the two emulators and their binfmt entries, not all 30 of them.
      dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$ARM_ROOT" \
        ./usr/bin/qemu-aarch64-static ./usr/bin/qemu-arm-static \
        ./usr/lib/binfmt.d/qemu-aarch64.conf ./usr/lib/binfmt.d/qemu-arm.conf
      ;;
    *) dpkg-deb -x "$deb" "$ARM_ROOT" ;;
    esac
  done
  rm -f "$arm_apt"/cache/archives/*.deb
  arm_relocate
  printf '%s' "$want" >"$stamp"
}

# The cross libc's linker scripts (libc.so, libm.so, ...) name their
# libraries by absolute path under /usr/<triple>/lib; point them into the
# unpacked tree.
arm_relocate() {
  local f gnu
  for gnu in aarch64-linux-gnu arm-linux-gnueabihf; do
    for f in "$ARM_ROOT/usr/$gnu"/lib/*.so; do
      if [ -f "$f" ] && [ ! -L "$f" ] && head -c 512 "$f" | grep -q 'GNU ld script'; then
        sed -i "s| /usr/$gnu/| $ARM_ROOT/usr/$gnu/|g" "$f"
      fi
    done
  done
}

# binfmt_misc entries named acp-codec-<arch>, pointing at the unpacked
# emulator. The F flag makes the kernel open the emulator now, so the entry
# keeps working for processes in any mount namespace.
arm_binfmt_registered=()
arm_binfmt() {
  local bm=/proc/sys/fs/binfmt_misc
  if [ ! -e "$bm/register" ]; then
    mount -t binfmt_misc binfmt_misc "$bm"
  fi
  local arch conf name magic mask
  for arch in aarch64 arm; do
    name=acp-codec-$arch
    [ -e "$bm/$name" ] && continue
    conf=$(cat "$ARM_ROOT/usr/lib/binfmt.d/qemu-$arch.conf")
    magic=$(printf '%s' "$conf" | cut -d: -f5)
    mask=$(printf '%s' "$conf" | cut -d: -f6)
    printf ':%s:M::%s:%s:%s:F' "$name" "$magic" "$mask" "$ARM_ROOT/usr/bin/qemu-$arch-static" >"$bm/register"
    arm_binfmt_registered+=("$name")
  done
}

arm_cleanup() {
  local name
  for name in "${arm_binfmt_registered[@]}"; do
    echo -1 >"/proc/sys/fs/binfmt_misc/$name" 2>/dev/null || true
  done
}

arm_env() {
  export PATH="$ARM_ROOT/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$ARM_ROOT/usr/lib/x86_64-linux-gnu:$ARM_ROOT/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export RUSTC="$ARM_ROOT/usr/bin/rustc" RUSTDOC="$ARM_ROOT/usr/bin/rustdoc"
  export CARGO="$ARM_ROOT/usr/bin/cargo"
  unset RUSTUP_TOOLCHAIN RUSTFLAGS CARGO_BUILD_RUSTFLAGS CARGO_ENCODED_RUSTFLAGS
  local t gnu qemu sysroot upper
  for t in aarch64-unknown-linux-gnu:aarch64-linux-gnu:aarch64 \
    armv7-unknown-linux-gnueabihf:arm-linux-gnueabihf:arm; do
    IFS=: read -r triple gnu qemu <<<"$t"
    upper=$(printf '%s' "$triple" | tr 'a-z-' 'A-Z_')
    sysroot="$ARM_ROOT/usr/$gnu"
    export "CARGO_TARGET_${upper}_LINKER=$ARM_ROOT/usr/bin/$gnu-gcc"
    export "CARGO_TARGET_${upper}_RUNNER=$ARM_ROOT/usr/bin/qemu-$qemu-static -L $sysroot"
    export "CC_${triple//-/_}=$ARM_ROOT/usr/bin/$gnu-gcc"
    export "AR_${triple//-/_}=$ARM_ROOT/usr/bin/$gnu-ar"
  done
}

# The sysroot qemu loads a target's shared libraries from; exported as
# QEMU_LD_PREFIX for that target's runs so that the binaries the tests spawn
# (started by binfmt_misc, without `-L`) find them too.
arm_sysroot() {
  case "$1" in
  aarch64-*) printf '%s' "$ARM_ROOT/usr/aarch64-linux-gnu" ;;
  armv7-*) printf '%s' "$ARM_ROOT/usr/arm-linux-gnueabihf" ;;
  *) echo "unknown target $1" >&2; return 1 ;;
  esac
}
