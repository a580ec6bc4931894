#!/bin/sh
# Two machines on one: two network namespaces joined by a veth pair
# (10.77.0.1 and 10.77.0.2), mpirun in the first starting one process in
# each, over TCP only, the second through an rsh agent that enters its
# namespace (as ssh would log in to another machine):
#   two_hosts.sh DIR PROGRAM ARGS...
# Needs root (ip netns). The namespaces and the link go away at the end.
set -e
dir=$1
shift
mkdir -p "$dir"
a=tgc-a$$
b=tgc-b$$
cleanup() {
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
ip netns add "$a"
ip netns add "$b"
ip link add "va$$" type veth peer name "vb$$"
ip link set "va$$" netns "$a"
ip link set "vb$$" netns "$b"
ip -n "$a" addr add 10.77.0.1/24 dev "va$$"
ip -n "$b" addr add 10.77.0.2/24 dev "vb$$"
for ns in "$a" "$b"; do
  ip -n "$ns" link set lo up
done
ip -n "$a" link set "va$$" up
ip -n "$b" link set "vb$$" up
cat > "$dir/agent.sh" <<AGENT
#!/bin/sh
# mpirun's rsh agent: "agent.sh HOST COMMAND..." runs COMMAND on HOST.
host=\$1
shift
case \$host in
  10.77.0.1) ns=$a ;;
  10.77.0.2) ns=$b ;;
  *) echo "agent.sh: unknown host \$host" >&2; exit 1 ;;
esac
echo "started on \$host (namespace \$ns): \$1" >> "$dir/agent.log"
exec ip netns exec \$ns sh -c "\$*"
AGENT
chmod +x "$dir/agent.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_orte_tmpdir_base="$dir"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
ip netns exec "$a" mpirun --host 10.77.0.1,10.77.0.2 -np 2 --bind-to none \
  --mca plm_rsh_agent "$dir/agent.sh" --mca btl self,tcp \
  --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
  "$@"
