/*
 * numaplace/emulated.h - is this CPU an emulator's software model?
 *
 * Its hardware counters then count what the emulator defines (QEMU with precise icount: every
 * instruction 2^shift cycles), not what a machine did: a CPI is the emulator's, and a prediction
 * from it means nothing about the code. A virtual machine on a real CPU (KVM) is not emulated:
 * its counters are the hardware's.
 */
#ifndef NUMAPLACE_EMULATED_H
#define NUMAPLACE_EMULATED_H

#include <stdbool.h>
#include <stddef.h>

#include "numaplace/common.h"

/**
 * Say whether the CPU is emulated, and why: on arm64 /proc/cpuinfo's "CPU implementer" 0x00,
 * the code Arm reserves for software models (QEMU's emulated CPUs use it); on x86 the CPUID
 * hypervisor signature "TCGTCGTCGTCG" (QEMU's emulator; KVM says "KVMKVMKVM").
 * @param root filesystem root for /proc (NULL or "" = "/"), so tests read captured files
 * @param why  when emulated, what says so (for reports and logs); "" otherwise
 * @return true when emulated; false when not, or when nothing could be read
 */
NP_API bool np_cpu_emulated(const char *root, char *why, size_t why_len);

#endif
