// Package cpuset parses and formats Linux CPU sets in the kernel's list
// ("0-3,8-11") and mask ("ff,ffffffff") syntaxes.
//
// The list syntax is what the kernel prints with %*pbl (smp_affinity_list,
// sysfs cpulist files) and accepts through bitmap_parselist: single CPUs "n",
// ranges "a-b", group/stride ranges "a-b:used/group", "N" for the last CPU
// and "all" for every CPU. The mask syntax is the kernel's %*pb format
// (smp_affinity, local_cpus, rps_cpus): hex digits with a comma every 32 bits,
// most-significant group first.
//
// A [Set] is an immutable value; its zero value is the empty set. CPU numbers
// are limited to [0, 65536) so that hostile input cannot make the parsers
// allocate large amounts of memory; Linux itself supports at most 8192 CPUs.
package cpuset
