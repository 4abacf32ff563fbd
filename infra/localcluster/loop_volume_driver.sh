#!/bin/bash
# A FlexVolume driver (Kubernetes' exec volume plugin) for the real nodes' expandable volumes:
# each volume is an XFS filesystem in a sparse file, mounted through a loop device. The kubelet
# calls `mount`/`unmount` (no attach step: every node shares this machine's disk) and, once a
# claim asks for more, `expandfs` on the mounted volume, which grows the file (the disk) and
# then the filesystem online, as a cloud driver's controller and node expansion do together.
#
# XFS because it grows online with CAP_SYS_ADMIN alone; ext4's online resize also needs
# CAP_SYS_RESOURCE, which the machines this runs on may lack (docs/real-nodes.md).
#
# Each call answers one JSON object on stdout, as the protocol says; the file's path and its
# first size come from the PersistentVolume's `flexVolume.options` (infra/localcluster/
# loop_volumes.py writes them).
set -euo pipefail
# The kubelet reads stdout and stderr as one (Go's CombinedOutput), so nothing but the answer
# may be printed: the answer goes to the original stdout (fd 3), all else nowhere, and a
# failing tool's words reach the answer's message.
exec 3>&1 >/dev/null 2>&1

answer() {
  jq -cn --arg status "$1" --arg message "${2:-}" '{status: $status, message: $message}' >&3
}
fail() { answer Failure "$1"; exit 1; }
option() { jq -r --arg key "$2" '.[$key] // empty' <<<"$1"; }
# The loop device (or devices) holding `file`, e.g. /dev/loop3.
devices_of() { losetup --associated "$1" --noheadings --output NAME; }

mount_volume() {
  local dir=$1 file size out
  file=$(option "$2" file)
  size=$(option "$2" size)
  [ -n "$file" ] && [ -n "$size" ] || fail "the volume's options lack file or size: $2"
  if [ ! -e "$file" ]; then
    mkdir -p "$(dirname "$file")"
    truncate --size "$size" "$file.part"
    out=$(mkfs.xfs -q "$file.part" 2>&1) || fail "mkfs.xfs $file: $out"
    mv "$file.part" "$file"
  fi
  mkdir -p "$dir"
  if ! mountpoint -q "$dir"; then
    # -o loop: a loop device that detaches itself when the last mount of it goes.
    out=$(mount -t xfs -o loop "$file" "$dir" 2>&1) || fail "mount $file on $dir: $out"
  fi
  answer Success
}

unmount_volume() {
  local dir=$1 out
  if mountpoint -q "$dir"; then
    out=$(umount "$dir" 2>&1) || fail "umount $dir: $out"
  fi
  answer Success
}

# expandfs SPEC DEVICE-PATH DEVICE-MOUNT-PATH NEW-BYTES OLD-BYTES, on the node whose pod
# mounts the volume: the disk (file) grows to the claim's new size, then the mounted filesystem
# grows into it. Kubernetes treats FlexVolumes as expandable by the kubelet alone: the
# controller-manager only records the new size (FindExpandablePluginBySpec's no-op plugin), so
# the disk's growth is this step's too. Never shrinks; asked again, it changes nothing.
expand_filesystem() {
  local file new device target out
  file=$(option "$1" file)
  new=$4
  device=$(devices_of "$file" | head -n 1)
  [ -n "$device" ] || fail "$file is not mounted: it grows at its next mount"
  if [ "$new" -gt "$(stat --format %s "$file")" ]; then
    truncate --size "$new" "$file"
  fi
  out=$(losetup --set-capacity "$device" 2>&1) || fail "losetup --set-capacity $device: $out"
  target=$(findmnt --noheadings --first-only --output TARGET --source "$device") ||
    fail "$device is mounted nowhere"
  out=$(xfs_growfs -d "$target" 2>&1) || fail "xfs_growfs $target: $out"
  answer Success
}

case "${1:-}" in
  init) jq -cn '{status: "Success", capabilities: {attach: false}}' >&3 ;;
  mount) mount_volume "$2" "$3" ;;
  unmount) unmount_volume "$2" ;;
  expandfs) expand_filesystem "$2" "$3" "$4" "$5" "$6" ;;
  *) answer "Not supported" "${1:-no command}" ;;
esac
