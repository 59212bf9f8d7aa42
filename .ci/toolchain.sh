# Sourced by the CI scripts: the toolchains they use, installed or the run
# fails with a message that says which step of the set-up broke.

# The nightly that miri, the rustdoc example lint, ThreadSanitizer and the
# fuzzers run on. Pinned so that a run does not change with the day: a newer
# nightly can reject code that passed yesterday (the 2026-09 nightlies began
# to type-check the variadic arguments of `syscall` under miri). Moving it is
# a commit of its own, after `bash .ci/run` passes on the new date.
NIGHTLY=nightly-2026-10-30

ci_fail() {
  printf 'ci: %s\n' "$*" >&2
  exit 1
}

# The oldest Rust the published crates promise to build on: the
# `rust-version` of the workspace's Cargo.toml, read from there so that the
# check follows the declaration.
msrv() {
  sed -n 's/^rust-version = "\([0-9.]*\)".*/\1/p' Cargo.toml | head -n 1
}

# Rust VERSION, minimal profile. Cheap when it is already there.
install_msrv() {
  rustup toolchain install "$1" --profile minimal ||
    ci_fail "could not install Rust $1, the workspace's rust-version (see .ci/toolchain.sh)"
}

# Stable's rustfmt and clippy.
install_stable_components() {
  rustup component add rustfmt clippy ||
    ci_fail "could not add rustfmt and clippy to the stable toolchain"
}

# The pinned nightly with miri and the standard library's sources (miri and
# -Zbuild-std need them). Cheap when it is already there.
install_nightly() {
  local have
  have=$(rustup component list --toolchain "$NIGHTLY" --installed 2>/dev/null || true)
  if grep -q '^miri' <<<"$have" && grep -q '^rust-src' <<<"$have"; then
    return
  fi
  rustup toolchain install "$NIGHTLY" --profile minimal --component miri,rust-src ||
    ci_fail "could not install $NIGHTLY with miri and rust-src (see .ci/toolchain.sh)"
}
