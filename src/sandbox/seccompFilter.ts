/**
 * A classic-BPF seccomp program (what `bwrap --seccomp FD` loads) that refuses, with EPERM, the system calls a
 * sandboxed program never needs and that widen the kernel's attack surface: tracing other processes, mounts, new
 * namespaces (a user namespace would make the code root of its own), kernel modules and keyrings, bpf, userfaultfd,
 * perf and reading other processes' memory. clone3 answers ENOSYS, so the C library falls back to clone, whose flags
 * a classic filter can inspect (clone3 passes them in memory it cannot read). Built here, so no libseccomp is needed.
 *
 * Memory that no process's size shows answers ENOSYS too, as on a kernel built without it (programs that can do
 * without fall back, Python raises `OSError: [Errno 38] Function not implemented`): anonymous files (memfd_create,
 * memfd_secret), whose pages count in no process while they are not mapped, and System V IPC (shared memory
 * segments, semaphore sets, message queues), whose objects live in the IPC namespace, not in a process. The memory
 * watchdog sums what processes map, so gigabytes held there passed the memory limit unseen (semaphore sets are the
 * kernel's own memory: a loop of them took over 10 GB in half a minute). Python's multiprocessing and shared_memory
 * use POSIX shared memory and semaphores instead: files in /dev/shm, a sized tmpfs.
 */

interface Arch {
  /** AUDIT_ARCH_* of the native system call ABI. */
  audit: number;
  clone: number;
  clone3: number;
  /** System call numbers at and above this belong to another ABI on the same arch (x32 on x86_64): refused. */
  foreignFrom?: number;
  denied: readonly number[];
  /** Answered ENOSYS, as if the kernel had no such call (see above). */
  unsupported: readonly number[];
}

const ARCHES: Partial<Record<NodeJS.Architecture, Arch>> = {
  x64: {
    audit: 0xc000003e,
    clone: 56,
    clone3: 435,
    foreignFrom: 0x40000000,
    // ptrace, mount, umount2, swapon, swapoff, reboot, pivot_root, chroot, acct, settimeofday, iopl, ioperm,
    // init_module, delete_module, quotactl, add_key, request_key, keyctl, kexec_load, unshare, perf_event_open,
    // name_to_handle_at, open_by_handle_at, setns, process_vm_readv, process_vm_writev, finit_module,
    // kexec_file_load, bpf, userfaultfd, open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr
    denied: [101, 165, 166, 167, 168, 169, 155, 161, 163, 164, 172, 173, 175, 176, 179, 248, 249, 250, 246, 272, 298, 303, 304, 308, 310, 311, 313, 320, 321, 323, 428, 429, 430, 431, 432, 433, 442],
    // memfd_create, memfd_secret, shmget, shmat, shmctl, shmdt, semget, semop, semctl, semtimedop, msgget, msgsnd,
    // msgrcv, msgctl
    unsupported: [319, 447, 29, 30, 31, 67, 64, 65, 66, 220, 68, 69, 70, 71],
  },
  arm64: {
    audit: 0xc00000b7,
    clone: 220,
    clone3: 435,
    // the same calls, by the generic table's numbers
    denied: [117, 40, 39, 224, 225, 142, 41, 51, 89, 170, 105, 106, 60, 217, 218, 219, 104, 97, 241, 264, 265, 268, 270, 271, 273, 294, 280, 282, 428, 429, 430, 431, 432, 433, 442],
    unsupported: [279, 447, 194, 196, 195, 197, 190, 193, 191, 192, 186, 189, 188, 187],
  },
};

/** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET. */
const CLONE_NEW_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
/** Offsets in struct seccomp_data: nr, arch, args[0] (its low 32 bits: both arches are little-endian). */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

type Instruction = [code: number, jt: number, jf: number, k: number];

/** The filter for this machine's architecture, or undefined where lllm has no table for it. */
export function seccompFilter(arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const table = ARCHES[arch];
  if (table === undefined) return undefined;
  // Laid out back to front is awkward; instead every test jumps to one of three returns at the end, whose
  // distance is computed from the instruction's own index.
  const body: Array<{ code: number; k: number; onTrue?: Target; onFalse?: Target }> = [];
  type Target = "deny" | "allow" | "nosys" | "next";
  body.push({ code: LD_W_ABS, k: ARCH });
  body.push({ code: JEQ_K, k: table.audit, onTrue: "next", onFalse: "deny" });
  body.push({ code: LD_W_ABS, k: NR });
  if (table.foreignFrom !== undefined) body.push({ code: JGE_K, k: table.foreignFrom, onTrue: "deny", onFalse: "next" });
  for (const nr of table.denied) body.push({ code: JEQ_K, k: nr, onTrue: "deny", onFalse: "next" });
  for (const nr of table.unsupported) body.push({ code: JEQ_K, k: nr, onTrue: "nosys", onFalse: "next" });
  body.push({ code: JEQ_K, k: table.clone3, onTrue: "nosys", onFalse: "next" });
  body.push({ code: JEQ_K, k: table.clone, onTrue: "next", onFalse: "allow" });
  body.push({ code: LD_W_ABS, k: ARG0_LOW });
  body.push({ code: JSET_K, k: CLONE_NEW_NAMESPACES, onTrue: "deny", onFalse: "allow" });
  const returns: Record<Exclude<Target, "next">, number> = { allow: body.length, deny: body.length + 1, nosys: body.length + 2 };
  const offset = (index: number, target: Target | undefined): number => {
    const distance = target === undefined || target === "next" ? 0 : returns[target] - index - 1;
    if (distance > 255) throw new Error("seccomp filter: jump too far");
    return distance;
  };
  const program: Instruction[] = body.map((step, index) => [step.code, offset(index, step.onTrue), offset(index, step.onFalse), step.k]);
  program.push([RET_K, 0, 0, RET_ALLOW], [RET_K, 0, 0, RET_ERRNO | EPERM], [RET_K, 0, 0, RET_ERRNO | ENOSYS]);
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], index) => {
    bytes.writeUInt16LE(code, index * 8);
    bytes.writeUInt8(jt, index * 8 + 2);
    bytes.writeUInt8(jf, index * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return bytes;
}
