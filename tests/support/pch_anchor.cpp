// Anchor translation unit of the tests' precompiled header.
