package opfile

// openNonBlocking: Windows has no FIFOs in the file system to hang on.
const openNonBlocking = 0

// openNoFollow: Windows has no O_NOFOLLOW; ReadRegularNoFollow looks at the entry first instead.
const openNoFollow = 0
