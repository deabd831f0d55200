// A module without functions.
module {
}
