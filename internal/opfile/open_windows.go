package opfile

// openNonBlocking: Windows has no FIFOs in the file system to hang on.
const openNonBlocking = 0
