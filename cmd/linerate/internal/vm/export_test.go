package vm

// KernelMeta is the cache entry's metadata file, for the external tests.
const KernelMeta = kernelMeta
