# Sourced by the bench scripts: tree_commit [DIR] prints the commit their results are
# filed under. FLASHTICK_COMMIT wins where it is set: the device machine's copy of the
# working tree can carry an older git HEAD than the tree it holds, or none (a `git
# archive` unpacked there), so the caller names the commit it sent.
tree_commit() {
  echo "${FLASHTICK_COMMIT:-$(git -C "${1:-.}" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
}
