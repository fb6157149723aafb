// SPDX-License-Identifier: Apache-2.0
// quota/quota.hpp — umbrella header: the core of the library.
// Opt-in integrations are separate: quota/json.hpp, quota/fmt.hpp.
// Docs: docs/resources.md
#pragma once

#include <quota/decision.hpp>
#include <quota/duration.hpp>
#include <quota/error.hpp>
#include <quota/fraction.hpp>
#include <quota/policy.hpp>
#include <quota/quantity.hpp>
#include <quota/resource.hpp>
#include <quota/resource_concepts.hpp>
#include <quota/resource_vector.hpp>
#include <quota/version.hpp>
