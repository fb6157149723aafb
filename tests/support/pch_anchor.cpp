// SPDX-License-Identifier: Apache-2.0
// Anchor translation unit of the tests' precompiled header.
