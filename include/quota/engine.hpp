// quota/engine.hpp — composes any subset of quota models behind one interface.
//
//   quota::basic_engine<A, B, C> e(a, b, c);   // models fixed at compile time
//   quota::engine e;                            // models chosen at run time
//   e.add(quota::any_policy(std::move(model)));
//
//   decision d = e.check(job);      // every model is asked; reasons of all
//   decision d = e.admit(job);      // all-or-nothing: commits in every model or in none
//   e.release(job.id);              // always succeeds in every model
//   e.victims(job, out);            // candidates from every model
//
// All-or-nothing: admit() asks every model first and commits only when all
// allow. If a model's commit throws (overflow, a model-specific state error),
// the models already committed are released again, the error propagates, and
// the engine is as before.
//
// Thread safety: an engine is a plain value. check(), victims() and the const
// accessors may run concurrently with each other when every model's const
// members may (all models of this library qualify). admit() and release()
// mutate and must be serialised by the host (one scheduling thread, or a
// mutex around them). Models that are documented as internally synchronised
// (the user/group limit trackers) may additionally be updated from other
// threads through their own API.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include <quota/decision.hpp>
#include <quota/error.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>

namespace quota {

/// A type-erased policy: holds any type that satisfies quota::policy.
class any_policy {
 public:
  template <class P>
    requires(policy<std::remove_cvref_t<P>> && !std::is_same_v<std::remove_cvref_t<P>, any_policy>)
  explicit any_policy(P&& p) : self_(std::make_unique<model<std::remove_cvref_t<P>>>(std::forward<P>(p))) {}

  any_policy(const any_policy& o) : self_(o.self_ ? o.self_->clone() : nullptr) {}
  any_policy& operator=(const any_policy& o) {
    if (this != &o) self_ = o.self_ ? o.self_->clone() : nullptr;
    return *this;
  }
  any_policy(any_policy&&) noexcept = default;
  any_policy& operator=(any_policy&&) noexcept = default;
  ~any_policy() = default;

  [[nodiscard]] std::string_view policy_name() const { return self_->name(); }
  [[nodiscard]] decision check(const job& j) const { return self_->check(j); }
  void commit(const job& j) { self_->commit(j); }
  void release(std::string_view id) { self_->release(id); }
  void victims(const job& j, std::vector<victim>& out) const { self_->victims(j, out); }

  /// The held model, if it is a P.
  template <class P>
  [[nodiscard]] P* target() noexcept {
    auto* m = dynamic_cast<model<P>*>(self_.get());
    return m ? &m->value : nullptr;
  }
  template <class P>
  [[nodiscard]] const P* target() const noexcept {
    const auto* m = dynamic_cast<const model<P>*>(self_.get());
    return m ? &m->value : nullptr;
  }

 private:
  struct concept_t {
    virtual ~concept_t() = default;
    [[nodiscard]] virtual std::string_view name() const = 0;
    [[nodiscard]] virtual decision check(const job&) const = 0;
    virtual void commit(const job&) = 0;
    virtual void release(std::string_view) = 0;
    virtual void victims(const job&, std::vector<victim>&) const = 0;
    [[nodiscard]] virtual std::unique_ptr<concept_t> clone() const = 0;
  };
  template <class P>
  struct model final : concept_t {
    template <class U>
    explicit model(U&& u) : value(std::forward<U>(u)) {}
    [[nodiscard]] std::string_view name() const override { return value.policy_name(); }
    [[nodiscard]] decision check(const job& j) const override { return value.check(j); }
    void commit(const job& j) override { value.commit(j); }
    void release(std::string_view id) override { value.release(id); }
    void victims(const job& j, std::vector<victim>& out) const override { value.victims(j, out); }
    [[nodiscard]] std::unique_ptr<concept_t> clone() const override {
      if constexpr (std::is_copy_constructible_v<P>)
        return std::make_unique<model>(value);
      else
        throw state_error(error_id::state_conflict, "policy '" + std::string(value.policy_name()) +
                                                        "' cannot be copied");
    }
    P value;
  };
  std::unique_ptr<concept_t> self_;
};

static_assert(policy<any_policy>);

namespace detail {
/// Records admitted job ids so release() can refuse unknown ones before any
/// model is touched.
class admitted_set {
 public:
  [[nodiscard]] bool contains(std::string_view id) const { return ids_.find(id) != ids_.end(); }
  void insert(const std::string& id) { ids_.emplace(id); }
  void erase(std::string_view id) {
    if (auto it = ids_.find(id); it != ids_.end()) ids_.erase(it);
  }
  [[nodiscard]] std::size_t size() const noexcept { return ids_.size(); }
  void reserve(std::size_t n) { ids_.reserve(n); }

 private:
  std::unordered_set<std::string, string_hash, std::equal_to<>> ids_;
};

[[noreturn]] inline void throw_duplicate_job(std::string_view id) {
  throw state_error(error_id::state_duplicate, "job '" + std::string(id) + "' is already admitted");
}
[[noreturn]] inline void throw_unknown_job(std::string_view id) {
  throw unknown_entity_error(error_id::unknown_job, "job", id);
}
}  // namespace detail

/// An engine over models fixed at compile time.
template <policy... Ps>
class basic_engine {
 public:
  basic_engine() = default;
  explicit basic_engine(Ps... ps) : models_(std::move(ps)...) {}

  [[nodiscard]] static constexpr std::string_view policy_name() noexcept { return "engine"; }
  [[nodiscard]] static constexpr std::size_t model_count() noexcept { return sizeof...(Ps); }

  /// Asks every model; the decision holds the reasons of every model that denies.
  [[nodiscard]] decision check(const job& j) const {
    decision d;
    std::apply([&](const auto&... m) { (d.merge(m.check(j)), ...); }, models_);
    return d;
  }

  /// Admits the job in every model, or in none. A denial is returned, not thrown.
  decision admit(const job& j) {
    if (admitted_.contains(j.id)) detail::throw_duplicate_job(j.id);
    decision d = check(j);
    if (d.denied()) return d;
    admitted_.insert(j.id);
    try {
      commit_from<0>(j);
    } catch (...) {
      admitted_.erase(j.id);
      throw;
    }
    return d;
  }

  /// Same as admit() for a job the host already checked: kept for symmetry
  /// with the policy concept (the engine is itself a policy).
  void commit(const job& j) {
    const decision d = admit(j);
    if (d.denied())
      throw state_error(error_id::state_not_admitted, "job '" + j.id + "' was committed but a model denies it: " +
                                                          to_string(d));
  }

  /// Releases the job from every model. Unknown id: unknown_entity_error, nothing changes.
  void release(std::string_view id) {
    if (!admitted_.contains(id)) detail::throw_unknown_job(id);
    std::apply([&](auto&... m) { (m.release(id), ...); }, models_);
    admitted_.erase(id);
  }

  void victims(const job& j, std::vector<victim>& out) const {
    std::apply([&](const auto&... m) { (m.victims(j, out), ...); }, models_);
  }

  [[nodiscard]] bool is_admitted(std::string_view id) const { return admitted_.contains(id); }
  [[nodiscard]] std::size_t admitted_count() const noexcept { return admitted_.size(); }

  template <std::size_t I>
  [[nodiscard]] auto& model() noexcept {
    return std::get<I>(models_);
  }
  template <std::size_t I>
  [[nodiscard]] const auto& model() const noexcept {
    return std::get<I>(models_);
  }
  template <class P>
  [[nodiscard]] P& model() noexcept {
    return std::get<P>(models_);
  }

 private:
  template <std::size_t I>
  void commit_from(const job& j) {
    if constexpr (I < sizeof...(Ps)) {
      std::get<I>(models_).commit(j);
      try {
        commit_from<I + 1>(j);
      } catch (...) {
        std::get<I>(models_).release(j.id);
        throw;
      }
    }
  }

  std::tuple<Ps...> models_;
  detail::admitted_set admitted_;
};

/// An engine over models chosen at run time (type-erased).
class engine {
 public:
  engine() = default;

  [[nodiscard]] static constexpr std::string_view policy_name() noexcept { return "engine"; }

  /// Adds a model. Models are asked in the order they were added.
  void add(any_policy p) {
    if (admitted_.size() != 0)
      throw state_error(error_id::state_conflict, "models cannot be added while jobs are admitted");
    models_.push_back(std::move(p));
  }
  [[nodiscard]] std::size_t model_count() const noexcept { return models_.size(); }
  [[nodiscard]] any_policy& model(std::size_t i) { return models_.at(i); }
  [[nodiscard]] const any_policy& model(std::size_t i) const { return models_.at(i); }

  [[nodiscard]] decision check(const job& j) const {
    decision d;
    for (const auto& m : models_) d.merge(m.check(j));
    return d;
  }

  decision admit(const job& j) {
    if (admitted_.contains(j.id)) detail::throw_duplicate_job(j.id);
    decision d = check(j);
    if (d.denied()) return d;
    std::size_t done = 0;
    try {
      for (; done < models_.size(); ++done) models_[done].commit(j);
      admitted_.insert(j.id);
    } catch (...) {
      while (done > 0) models_[--done].release(j.id);
      throw;
    }
    return d;
  }

  void commit(const job& j) {
    const decision d = admit(j);
    if (d.denied())
      throw state_error(error_id::state_not_admitted, "job '" + j.id + "' was committed but a model denies it: " +
                                                          to_string(d));
  }

  void release(std::string_view id) {
    if (!admitted_.contains(id)) detail::throw_unknown_job(id);
    for (auto& m : models_) m.release(id);
    admitted_.erase(id);
  }

  void victims(const job& j, std::vector<victim>& out) const {
    for (const auto& m : models_) m.victims(j, out);
  }

  [[nodiscard]] bool is_admitted(std::string_view id) const { return admitted_.contains(id); }
  [[nodiscard]] std::size_t admitted_count() const noexcept { return admitted_.size(); }

 private:
  std::vector<any_policy> models_;
  detail::admitted_set admitted_;
};

static_assert(policy<engine>);

}  // namespace quota
