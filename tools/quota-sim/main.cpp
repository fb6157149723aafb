// SPDX-License-Identifier: Apache-2.0
// quota-sim: replay scenarios through the reference scheduler and the quota engine.
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compare.hpp"
#include "explain.hpp"
#include "generate.hpp"
#include "import_cluster.hpp"
#include "models.hpp"
#include "openb.hpp"
#include "scenario.hpp"
#include "simulator.hpp"

namespace {

constexpr int exit_ok = 0, exit_expectations = 1, exit_invalid = 2, exit_usage = 64;

const char* main_help =
    "quota-sim: replay a scenario through a reference scheduler and the composed quota models.\n"
    "\n"
    "usage:\n"
    "  quota-sim run SCENARIO [--report FILE] [--svg FILE] [--until T] [--quiet]\n"
    "  quota-sim validate SCENARIO\n"
    "  quota-sim generate [--nodes N] [--tenants N] [--users N] [--jobs N] [--seed S]\n"
    "                     [--arrival poisson|burst] [--policy a,b] [-o FILE]\n"
    "  quota-sim import openb --nodes NODES.csv --pods PODS.csv [--tenants N] [--tenant-rule hash|qos]\n"
    "                         [--policy a,b] [--seed S] [-o FILE]\n"
    "  quota-sim import cluster DUMP.json [--from-objects] [--policy a,b] [--queue-by R]\n"
    "                           [--duration D] [--seed S] [--now T] [--yunikorn Q.yaml] [-o FILE]\n"
    "  quota-sim replay openb --nodes NODES.csv --pods PODS.csv [import options] [--report FILE] [--svg FILE]\n"
    "  quota-sim compare SCENARIO --policies none,a,b+c [--report FILE] [--svg FILE]\n"
    "  quota-sim compare openb --nodes NODES.csv --pods PODS.csv [import options] --policies none,a,b+c\n"
    "  quota-sim explain SCENARIO --at T --job FILE [--json]\n"
    "  quota-sim models\n"
    "  quota-sim COMMAND --help\n"
    "\n"
    "input limits (any command; docs/reliability.md):\n"
    "  --max-input-mb N   largest scenario or job file read (default 256)\n"
    "  --max-values N     JSON/YAML values of a file (default 20000000)\n"
    "  --max-jobs N       jobs after count copies (default 1000000)\n"
    "  --max-nodes N      nodes after count copies (default 100000)\n"
    "  --lenient-objects  unknown fields of the Kubernetes objects in policies are warnings,\n"
    "                     not errors (as kubectl --validate=warn)\n"
    "\n"
    "exit status: 0 every expectation holds; 1 an expectation failed; 2 invalid scenario; 64 usage error\n";

const char* run_help =
    "quota-sim run SCENARIO [--report FILE] [--svg FILE] [--until T] [--quiet]\n"
    "                       [--check-invariants] [--cycle D]\n"
    "\n"
    "Replays SCENARIO (JSON, or YAML as .yaml/.yml; see docs/scenario-format.md) deterministically: the same\n"
    "input gives a byte-identical report. Writes the JSON report and the SVG chart\n"
    "(default: SCENARIO's base name with .report.json / .svg in the current folder),\n"
    "prints a summary, and lists every failed expectation.\n"
    "  --report FILE   where to write the JSON report ('-' for stdout)\n"
    "  --svg FILE      where to write the SVG chart\n"
    "  --until T       stop at time T (milliseconds, or 90s, 5m, 2h, 1d)\n"
    "  --quiet         no summary, no progress bar\n"
    "  --cycle D       scheduling cycles of D (1s, 500ms, or milliseconds): one pass per\n"
    "                  cycle boundary instead of one per instant (the scenario's\n"
    "                  scheduler.cycle)\n"
    "  --check-invariants  after every instant, check that each node's pods fit its\n"
    "                  allocatable and no GPU device is over-shared; at the end, that\n"
    "                  every submitted job ran or has a pending reason (exit 1 if not)\n";

const char* validate_help =
    "quota-sim validate SCENARIO\n"
    "\n"
    "Checks SCENARIO and every model's objects; prints every problem with its JSON path.\n"
    "A file validate accepts is one run accepts (run then fails only on expectations).\n"
    "A file with expect_error holds (exit 0, nothing replayed) when it is rejected with\n"
    "exactly the problems it names, and fails (exit 1) otherwise.\n";

const char* models_help = "quota-sim models\n\nLists the models a scenario's policies[] may name.\n";

const char* import_help =
    "quota-sim import openb --nodes NODES.csv --pods PODS.csv [--tenants N] [--tenant-rule hash|qos]\n"
    "                       [--policy a,b] [--seed S] [--time-scale F] [--hold] [-o FILE]\n"
    "\n"
    "Turns the Alibaba openb GPU trace into a scenario (docs/trace-replay.md): nodes with their GPU\n"
    "devices and types, one job per pod (arrival, run time, fractional GPU share, GPU-type\n"
    "constraint, QoS priority), tenants by a stable hash of the pod name (or by QoS class), and\n"
    "quotas of the named models derived from the capacity. --time-scale F compresses arrivals F\n"
    "times (run times kept) to create contention; --hold keeps every pod until the end (the\n"
    "paper's fill-the-cluster runs; pod lists without time columns always hold).\n"
    "Nothing is written on an error.\n";

const char* import_cluster_help =
    "quota-sim import cluster DUMP.json [--from-objects] [--policy a,b] [--queue-by volcano|kueue|kai|namespace]\n"
    "                         [--duration D] [--seed S] [--now T] [--yunikorn QUEUES.yaml] [-o FILE]\n"
    "\n"
    "Turns a `kubectl get nodes,pods,... -A -o json` dump into a scenario (docs/cluster-import.md):\n"
    "schedulable nodes become the cluster, bound pods run at time 0 on their node, unbound pending pods\n"
    "arrive at their creation time (relative to --now, an RFC 3339 time, or the earliest one).\n"
    "  --from-objects  the dump's quota objects configure the models that read them\n"
    "  --policy a,b    models whose quotas are derived from the capacity (quota-sim generate's rules)\n"
    "  --queue-by R    whose rule gives a pod's queue (default: volcano, kueue, kai, namespace,\n"
    "                  the first the dump has objects of)\n"
    "  --duration D    how long each pod runs: 2h, uniform:30m-4h, exponential:2h, end (default 1h)\n"
    "  --seed S        the seed of the sampled durations (default 1)\n"
    "  --yunikorn F    a YuniKorn queues.yaml: a yunikorn_limits entry\n"
    "Prints what was read, left out and decided; nothing is written on an error.\n";

const char* replay_help =
    "quota-sim replay openb --nodes NODES.csv --pods PODS.csv [--tenants N] [--tenant-rule hash|qos]\n"
    "                       [--policy a,b] [--seed S] [--time-scale F] [--hold]\n"
    "                       [--report FILE] [--svg FILE] [--quiet] [--check-invariants]\n"
    "\n"
    "Imports the openb trace and replays it in one process, without writing or parsing the\n"
    "scenario JSON: the report is byte-identical to `import openb ... -o S.json` then `run S.json`.\n"
    "The import options are those of quota-sim import openb, the others those of quota-sim run\n"
    "(default report/chart: the pod list's base name with .report.json / .svg).\n";

const char* compare_help =
    "quota-sim compare SCENARIO --policies none,a,b+c [--report FILE] [--svg FILE]\n"
    "quota-sim compare openb --nodes NODES.csv --pods PODS.csv [import options] --policies none,a,b+c ...\n"
    "\n"
    "Replays SCENARIO's workload (or the openb trace, imported in the same process) once per policy set (none, or "
    "model names joined by '+'),\n"
    "with quotas each model derives from the cluster capacity and the scenario's tenants,\n"
    "and writes one side-by-side report (utilisation, GPU fragmentation, wait percentiles,\n"
    "preemptions, per-tenant usage, never-admitted jobs with reasons) and one SVG.\n"
    "The set 'scenario' replays SCENARIO's own policies as written (quota-sim import cluster\n"
    "--from-objects: the cluster's own quota objects).\n";

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string b = slash == std::string::npos ? path : path.substr(slash + 1);
  for (const char* ext : {".json", ".yaml", ".yml"}) {
    const std::string e(ext);
    if (b.size() > e.size() && b.compare(b.size() - e.size(), e.size(), e) == 0) {
      b = b.substr(0, b.size() - e.size());
      break;
    }
  }
  return b;
}

bool write_file(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    return true;
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) return false;
  out << text;
  return static_cast<bool>(out);
}

/// Walks a command's arguments from args[first]: --help or -h, wherever it
/// stands, prints the command's help and ends it (exit_ok); every other
/// argument goes to each(i), which may take the ones after it (advancing i)
/// and returns the exit status that ends the command, or nothing to go on.
std::optional<int> walk_args(const std::vector<std::string>& args, std::size_t first, const char* help,
                             const std::function<std::optional<int>(std::size_t& i)>& each) {
  for (std::size_t i = first; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::cout << help;
      return exit_ok;
    }
    if (auto rc = each(i)) return rc;
  }
  return std::nullopt;
}

/// The value of the option at args[i], taken (i advances to it); nullptr,
/// with `quota-sim CMD: OPTION needs a value` and then `help` when given,
/// when the option is the last argument.
const std::string* option_value(const std::vector<std::string>& args, std::size_t& i, const char* cmd,
                                const char* help = nullptr) {
  if (i + 1 >= args.size()) {
    std::cerr << "quota-sim " << cmd << ": " << args[i] << " needs a value\n" << (help ? help : "");
    return nullptr;
  }
  return &args[++i];
}

/// Where the value of option `a` goes among `options` (name, target), or
/// nullptr when `a` is none of them.
std::string* value_target(const std::string& a,
                          std::initializer_list<std::pair<std::string_view, std::string*>> options) {
  for (const auto& [name, target] : options)
    if (a == name) return target;
  return nullptr;
}

/// Appends the model names of a --policy value (a,b or a+b) to `out`.
void append_policies(const std::string& value, std::vector<std::string>& out) {
  std::string p;
  for (char c : value + ",") {
    if (c == ',' || c == '+') {
      if (!p.empty()) out.push_back(p);
      p.clear();
    } else {
      p.push_back(c);
    }
  }
}

struct loaded {
  std::unique_ptr<quota::sim::simulator> sim;
  /// A file that expects to be rejected (expect_error): the exit status, its
  /// outcome printed; the file is not replayed.
  std::optional<int> settled;
};

/// Reads, checks and builds a scenario and its replay. Every problem is
/// reported at once: those of the scenario's own fields and those of its
/// policies' objects (a typo at the top does not hide a bad object inside
/// policies[]), then those of the replay's set-up (the jobs running at the
/// start). A file with expect_error is settled here: rejected as it says
/// (exit 0), or not (exit 1).
loaded load(const std::string& file, std::int64_t cycle = 0) {
  const quota::json doc = quota::sim::load_scenario_file(file);
  quota::diagnostics diag;
  quota::sim::scenario sc = quota::sim::load_scenario(doc, diag, quota::sim::default_limits());
  const std::vector<quota::sim::error_expectation> expected = sc.expect_error;
  std::vector<quota::sim::model_instance> models;
  try {
    models = quota::sim::build_models(sc);
  } catch (const quota::validation_error& e) {
    for (const auto& p : e.problems()) diag.add(p.path, p.message);
  }
  loaded l;
  if (diag.empty()) {
    for (const auto& w : sc.warnings) std::cerr << "quota-sim: warning: " << w.path << ": " << w.message << "\n";
    if (cycle > 0) sc.cycle_ms = cycle;
    try {
      l.sim = std::make_unique<quota::sim::simulator>(std::move(sc), std::move(models));
    } catch (const quota::validation_error& e) {
      for (const auto& p : e.problems()) diag.add(p.path, p.message);
    } catch (const quota::error& e) {
      if (expected.empty()) throw;
      diag.add("$", e.what());
    }
  }
  // a malformed expect_error is an invalid file, whatever else it expects
  const bool malformed = std::any_of(diag.items().begin(), diag.items().end(),
                                     [](const quota::diagnostic& p) { return p.path.rfind("$.expect_error", 0) == 0; });
  if (expected.empty() || malformed) {
    diag.throw_if_any();
    return l;
  }
  std::vector<std::string> miss;
  if (diag.empty())
    miss.emplace_back("$.expect_error: the file is valid, but expect_error says it is rejected");
  else
    quota::sim::settle_expected_errors(expected, diag.items(), miss);
  l.sim.reset();
  if (miss.empty()) {
    std::cout << file << ": rejected as expected\n";
    for (const auto& p : diag.items()) {
      const std::string id = quota::sim::error_id_of(p.message);
      std::cout << "  " << p.path << ": "
                << (p.message.find("[" + id + "]") == std::string::npos ? "[" + id + "] " : "") << p.message << "\n";
    }
    l.settled = exit_ok;
  } else {
    std::cerr << "quota-sim: " << file << ": expect_error does not hold:\n";
    for (const auto& m : miss) std::cerr << "  " << m << "\n";
    l.settled = exit_expectations;
  }
  return l;
}

int report_invalid(const std::string& file, const quota::error& e) {
  std::cerr << "quota-sim: invalid scenario " << file << "\n";
  if (auto* v = dynamic_cast<const quota::validation_error*>(&e)) {
    for (const auto& p : v->problems()) std::cerr << "  " << p.path << ": " << p.message << "\n";
  } else {
    std::cerr << "  " << e.what() << "\n";
  }
  return exit_invalid;
}

/// Replays a loaded scenario, writes its report and chart, prints the summary
/// (quota-sim run and quota-sim replay openb). Throws quota::error.
int replay_and_write(quota::sim::simulator& sim, const std::string& report_path, const std::string& svg_path,
                     std::int64_t until, bool quiet, const quota::sim::run_options& opt) {
  const bool tty = !quiet && isatty(STDERR_FILENO);
  auto progress = [&](std::size_t done, std::size_t total) {
    if (!tty || total == 0) return;
    const int width = 40;
    const int filled = static_cast<int>(static_cast<double>(done) / static_cast<double>(total) * width);
    std::fprintf(stderr, "\r[%s%s] %zu/%zu", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), done, total);
    if (done >= total) std::fprintf(stderr, "\n");
  };
  const auto res = sim.run(until, progress, opt);
  if (!write_file(report_path, res.report.dump(2) + "\n")) {
    std::cerr << "quota-sim: cannot write " << report_path << "\n";
    return exit_usage;
  }
  if (!write_file(svg_path, sim.svg())) {
    std::cerr << "quota-sim: cannot write " << svg_path << "\n";
    return exit_usage;
  }
  if (!quiet) {
    const auto& t = res.report["totals"];
    std::ostream& out = report_path == "-" ? std::cerr : std::cout;
    out << "scenario " << res.report["scenario"].get<std::string>() << " with "
        << (res.report["policies"].empty() ? std::string("no quota models") : res.report["policies"].dump()) << "\n"
        << "  jobs " << t["jobs"] << ", admitted " << t["admitted"] << ", never admitted " << t["never_admitted"]
        << ", preemptions " << t["preemptions"] << "\n"
        << "  utilisation of " << res.report["chart_resource"].get<std::string>() << " " << t["utilisation"]
        << ", wait p50/p90/p99 " << t["wait"]["p50"].get<std::string>() << "/" << t["wait"]["p90"].get<std::string>()
        << "/" << t["wait"]["p99"].get<std::string>()
        << (t["wait_ms"]["censored"] > 0
                ? " (" + t["wait_ms"]["censored"].dump() + " never started, counted to the end)"
                : std::string())
        << ", fairness (Jain) " << t["fairness_jain"] << "\n"
        << "  expectations: "
        << (res.report["expectations"].get<std::size_t>() -
            static_cast<std::size_t>(std::count_if(res.failures.begin(), res.failures.end(),
                                                   [](const auto& f) { return f.path != "invariant"; })))
        << " of " << res.report["expectations"] << " hold\n"
        << "  report: " << report_path << "\n"
        << "  chart:  " << svg_path << "\n";
  }
  if (!res.failures.empty()) {
    std::cerr << "quota-sim: " << res.failures.size() << " expectation(s) or invariant(s) failed:\n";
    for (const auto& f : res.failures)
      std::cerr << "  " << f.path << " at " << f.at_ms << " ms: expected " << f.expected << ", got " << f.actual
                << "\n";
    return exit_expectations;
  }
  return exit_ok;
}

int cmd_run(const std::vector<std::string>& args) {
  std::string file, report_path, svg_path, until_text, cycle_text;
  bool quiet = false;
  quota::sim::run_options opt;
  opt.peak_snapshot = true;  // the report shows the models at peak contention
  if (auto rc = walk_args(args, 0, run_help, [&](std::size_t& i) -> std::optional<int> {
        const auto& a = args[i];
        if (std::string* text = value_target(a, {{"--report", &report_path},
                                                 {"--svg", &svg_path},
                                                 {"--until", &until_text},
                                                 {"--cycle", &cycle_text}})) {
          const std::string* v = option_value(args, i, "run");
          if (!v) return exit_usage;
          *text = *v;
        } else if (a == "--quiet") {
          quiet = true;
        } else if (a == "--check-invariants") {
          opt.check_invariants = true;
        } else if (!a.empty() && a[0] == '-') {
          std::cerr << "quota-sim run: unknown option " << a << "\n" << run_help;
          return exit_usage;
        } else if (file.empty()) {
          file = a;
        } else {
          std::cerr << "quota-sim run: one scenario at a time\n";
          return exit_usage;
        }
        return std::nullopt;
      }))
    return *rc;
  if (file.empty()) {
    std::cerr << run_help;
    return exit_usage;
  }
  std::int64_t until = -1;
  if (!until_text.empty()) {
    auto d = quota::sim::parse_time_option(until_text);
    if (!d) {
      std::cerr << "quota-sim run: --until expects a duration, got '" << until_text << "'\n";
      return exit_usage;
    }
    until = *d;
  }
  std::int64_t cycle = 0;
  if (!cycle_text.empty()) {
    const std::optional<std::int64_t> d = quota::sim::parse_time_option(cycle_text);
    if (!d || *d <= 0) {
      std::cerr << "quota-sim run: --cycle expects a positive duration (1s, 500ms, or milliseconds), got '"
                << cycle_text << "'\n";
      return exit_usage;
    }
    cycle = *d;
  }
  if (report_path.empty()) report_path = base_name(file) + ".report.json";
  if (svg_path.empty()) svg_path = base_name(file) + ".svg";
  try {
    loaded l = load(file, cycle);
    if (l.settled) return *l.settled;
    return replay_and_write(*l.sim, report_path, svg_path, until, quiet, opt);
  } catch (const quota::error& e) {
    return report_invalid(file, e);
  }
}

int cmd_validate(const std::vector<std::string>& args) {
  std::string file;
  if (auto rc = walk_args(args, 0, validate_help, [&](std::size_t& i) -> std::optional<int> {
        const auto& a = args[i];
        if (!a.empty() && a[0] == '-' && a != "-") {
          std::cerr << "quota-sim validate: unknown option " << a << "\n" << validate_help;
          return exit_usage;
        }
        if (!file.empty()) {
          std::cerr << "quota-sim validate: one scenario at a time\n" << validate_help;
          return exit_usage;
        }
        file = a;
        return std::nullopt;
      }))
    return *rc;
  if (file.empty()) {
    std::cerr << validate_help;
    return exit_usage;
  }
  try {
    // with the replay's own set-up checks (the ordering model orders, the
    // jobs running at the start fit): what run would reject
    const loaded l = load(file);
    if (l.settled) return *l.settled;
    std::cout << file << ": valid\n";
    return exit_ok;
  } catch (const quota::error& e) {
    return report_invalid(file, e);
  }
}

/// Reads `openb --nodes .. --pods ..` and the other import options from
/// args (args[0] is "openb"). `extra(option, next argument or nullptr)`
/// takes a command's own options: 0 not its option, 1 a flag, 2 an option
/// with the next argument as value, -1 an option missing its value. Returns
/// an exit status when the command should stop (help, usage error).
std::optional<int> parse_openb_args(const std::vector<std::string>& args, quota::sim::openb_options& o, const char* cmd,
                                    const char* help,
                                    const std::function<int(const std::string&, const std::string*)>& extra) {
  if (auto rc = walk_args(args, 1, help, [&](std::size_t& i) -> std::optional<int> {
        const auto& a = args[i];
        if (a == "--hold") {
          o.hold = true;
          return std::nullopt;
        }
        const int took = extra(a, i + 1 < args.size() ? &args[i + 1] : nullptr);
        if (took == 1) return std::nullopt;
        if (took == 2) {
          ++i;
          return std::nullopt;
        }
        const bool known = a == "--nodes" || a == "--pods" || a == "--tenants" || a == "--tenant-rule" ||
                           a == "--seed" || a == "--time-scale" || a == "--policy";
        if (took == 0 && !known) {
          std::cerr << "quota-sim " << cmd << ": unknown option " << a << "\n" << help;
          return exit_usage;
        }
        const std::string* value = option_value(args, i, cmd, help);
        if (!value) return exit_usage;
        const std::string& v = *value;
        try {
          if (a == "--nodes")
            o.nodes_file = v;
          else if (a == "--pods")
            o.pods_file = v;
          else if (a == "--tenants")
            o.tenants = static_cast<std::int64_t>(quota::sim::parse_count(v, 1, 1000).value());
          else if (a == "--tenant-rule")
            o.tenant_rule = v;
          else if (a == "--seed")
            o.seed = quota::sim::parse_count(v, 0, UINT64_MAX).value();
          else if (a == "--time-scale")
            o.time_scale = static_cast<std::int64_t>(quota::sim::parse_count(v, 1, 1'000'000).value());
          else  // --policy a,b (or a+b)
            append_policies(v, o.policies);
        } catch (const std::exception&) {
          const char* range = a == "--tenants"      ? " (an integer from 1 to 1000)"
                              : a == "--time-scale" ? " (an integer from 1 to 1000000)"
                              : a == "--seed"       ? " (an integer from 0 to 18446744073709551615)"
                                                    : "";
          std::cerr << "quota-sim " << cmd << ": bad value for " << a << ": '" << v << "'" << range << "\n";
          return exit_usage;
        }
        return std::nullopt;
      }))
    return rc;
  if (o.nodes_file.empty() || o.pods_file.empty()) {
    std::cerr << "quota-sim " << cmd << " openb: --nodes and --pods are required\n";
    return exit_usage;
  }
  return std::nullopt;
}

/// quota-sim import cluster: a kubectl dump as a scenario (docs/cluster-import.md).
int cmd_import_cluster(const std::vector<std::string>& args) {
  quota::sim::cluster_import_options o;
  std::string out;
  if (auto rc = walk_args(args, 1, import_cluster_help, [&](std::size_t& i) -> std::optional<int> {
        const auto& a = args[i];
        if (a == "--from-objects") {
          o.from_objects = true;
          return std::nullopt;
        }
        std::string* text = value_target(a, {{"--queue-by", &o.queue_by},
                                             {"--duration", &o.duration},
                                             {"--now", &o.now},
                                             {"--yunikorn", &o.yunikorn_file},
                                             {"-o", &out}});
        if (!text && a != "--policy" && a != "--seed") {
          if (!a.empty() && a[0] == '-') {
            std::cerr << "quota-sim import cluster: unknown option " << a << "\n" << import_cluster_help;
            return exit_usage;
          }
          if (!o.dump_file.empty()) {
            std::cerr << "quota-sim import cluster: one dump at a time\n";
            return exit_usage;
          }
          o.dump_file = a;
          return std::nullopt;
        }
        const std::string* v = option_value(args, i, "import cluster", import_cluster_help);
        if (!v) return exit_usage;
        if (text) {
          *text = *v;
        } else if (a == "--policy") {
          append_policies(*v, o.policies);
        } else {  // --seed
          const auto seed = quota::sim::parse_count(*v, 0, UINT64_MAX);
          if (!seed) {
            std::cerr << "quota-sim import cluster: bad value for --seed: '" << *v << "'\n";
            return exit_usage;
          }
          o.seed = *seed;
        }
        return std::nullopt;
      }))
    return *rc;
  if (o.dump_file.empty()) {
    std::cerr << import_cluster_help;
    return exit_usage;
  }
#ifdef __GLIBC__
  // a dump is millions of small JSON nodes, built and freed at once: without
  // fast bins glibc frees them without re-sorting them at every large free
  // (the import's CPU time drops by a tenth; docs/performance.md)
  mallopt(M_MXFAST, 0);
#endif
  try {
    const auto r = quota::sim::import_cluster(o);
    const std::string text = r.scenario.dump(1) + "\n";
    if (out.empty()) {
      std::cout << text;
    } else if (!write_file(out, text)) {
      std::cerr << "quota-sim import cluster: cannot write " << out << "\n";
      return exit_usage;
    }
    std::ostream& log = out.empty() ? std::cerr : std::cout;
    quota::sim::print_import_summary(log, r.summary);
    return exit_ok;
  } catch (const quota::error& e) {
    std::cerr << "quota-sim import cluster: " << o.dump_file << ": nothing written\n";
    if (auto* v = dynamic_cast<const quota::validation_error*>(&e))
      for (const auto& p : v->problems()) std::cerr << "  " << p.path << ": " << p.message << "\n";
    else
      std::cerr << "  " << e.what() << "\n";
    return exit_invalid;
  }
}

/// quota-sim import and replay: their help without arguments (exit_usage) or
/// with --help or -h first (exit_ok).
std::optional<int> leading_help(const std::vector<std::string>& args, const char* help) {
  if (!args.empty() && args[0] != "--help" && args[0] != "-h") return std::nullopt;
  std::cout << help;
  return args.empty() ? exit_usage : exit_ok;
}

/// What body() returns; a quota::error it throws ends the command with its
/// message and exit_invalid (quota-sim import openb and replay openb).
template <class F>
int or_invalid(const char* cmd, F&& body) {
  try {
    return body();
  } catch (const quota::error& e) {
    std::cerr << "quota-sim " << cmd << ": " << e.what() << "\n";
    return exit_invalid;
  }
}

int cmd_import(const std::vector<std::string>& args) {
  if (auto rc = leading_help(args, import_help)) return *rc;
  if (args[0] == "cluster") return cmd_import_cluster(args);
  if (args[0] != "openb") {
    std::cerr << "quota-sim import: unknown trace format '" << args[0] << "' (openb, cluster)\n";
    return exit_usage;
  }
  quota::sim::openb_options o;
  std::string out;
  if (auto rc = parse_openb_args(args, o, "import", import_help, [&](const std::string& a, const std::string* v) {
        if (a != "-o") return 0;
        if (!v) return -1;
        out = *v;
        return 2;
      }))
    return *rc;
  return or_invalid("import", [&] {
    const std::string text = quota::sim::import_openb(o).dump(1) + "\n";
    if (out.empty()) {
      std::cout << text;
    } else if (!write_file(out, text)) {
      std::cerr << "quota-sim import: cannot write " << out << "\n";
      return exit_usage;
    }
    return exit_ok;
  });
}

int cmd_replay(const std::vector<std::string>& args) {
  if (auto rc = leading_help(args, replay_help)) return *rc;
  if (args[0] != "openb") {
    std::cerr << "quota-sim replay: unknown trace format '" << args[0] << "' (openb)\n";
    return exit_usage;
  }
  quota::sim::openb_options o;
  std::string report_path, svg_path;
  bool quiet = false;
  quota::sim::run_options opt;
  opt.peak_snapshot = true;  // the report shows the models at peak contention
  if (auto rc = parse_openb_args(args, o, "replay", replay_help, [&](const std::string& a, const std::string* v) {
        if (a == "--quiet" || a == "--check-invariants") {
          (a == "--quiet" ? quiet : opt.check_invariants) = true;
          return 1;
        }
        std::string* text = value_target(a, {{"--report", &report_path}, {"--svg", &svg_path}});
        if (!text) return 0;
        if (!v) return -1;
        *text = *v;
        return 2;
      }))
    return *rc;
  if (report_path.empty()) report_path = base_name(o.pods_file.substr(0, o.pods_file.rfind('.'))) + ".report.json";
  if (svg_path.empty()) svg_path = base_name(o.pods_file.substr(0, o.pods_file.rfind('.'))) + ".svg";
  return or_invalid("replay", [&] {
    quota::sim::register_models();
    quota::sim::scenario sc = quota::sim::openb_scenario(quota::sim::read_openb(o));
    auto models = quota::sim::build_models(sc);
    quota::sim::simulator sim(std::move(sc), std::move(models));
    return replay_and_write(sim, report_path, svg_path, -1, quiet, opt);
  });
}

int cmd_compare(const std::vector<std::string>& args) {
  std::string file, sets_text = "none", report_path, svg_path;
  quota::sim::openb_options o;
  const bool openb = !args.empty() && args[0] == "openb";
  // the options of compare's own, in both forms
  auto output = [&](const std::string& a) {
    return value_target(a, {{"--policies", &sets_text}, {"--report", &report_path}, {"--svg", &svg_path}});
  };
  if (openb) {
    if (auto rc = parse_openb_args(args, o, "compare", compare_help, [&](const std::string& a, const std::string* v) {
          std::string* text = output(a);
          if (!text) return 0;
          if (!v) return -1;
          *text = *v;
          return 2;
        }))
      return *rc;
    file = o.pods_file.substr(0, o.pods_file.rfind('.'));
    o.policies.clear();  // each set brings its own
  } else if (auto rc = walk_args(args, 0, compare_help, [&](std::size_t& i) -> std::optional<int> {
               const auto& a = args[i];
               if (std::string* text = output(a)) {
                 const std::string* v = option_value(args, i, "compare");
                 if (!v) return exit_usage;
                 *text = *v;
               } else if (!a.empty() && a[0] != '-' && file.empty()) {
                 file = a;
               } else {
                 std::cerr << "quota-sim compare: unexpected argument " << a << "\n" << compare_help;
                 return exit_usage;
               }
               return std::nullopt;
             })) {
    return *rc;
  }
  if (file.empty()) {
    std::cerr << compare_help;
    return exit_usage;
  }
  std::vector<std::string> sets;
  std::string cur;
  for (char c : sets_text + ",") {
    if (c == ',') {
      if (!cur.empty()) sets.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (report_path.empty()) report_path = base_name(file) + ".compare.json";
  if (svg_path.empty()) svg_path = base_name(file) + ".compare.svg";
  try {
    std::vector<quota::sim::compare_run> runs;
    std::string name, res = quota::sim::gpu_milli_resource;
    if (openb) {
      const auto tr = quota::sim::read_openb(o);
      name = tr.name;
      runs = quota::sim::compare_policies(quota::sim::openb_scenario(tr, quota::json::array()), sets);
    } else {
      quota::json doc = quota::sim::load_scenario_file(file);
      (void)quota::sim::load_scenario(doc);  // every problem with its path, before the document is read here
      name = doc.value("name", base_name(file));
      res = doc.contains("chart") ? doc["chart"].value("resource", "nvidia.com/gpu") : "nvidia.com/gpu";
      runs = quota::sim::compare_policies(std::move(doc), sets);
    }
    if (!write_file(report_path, quota::sim::compare_report(name, runs).dump(2) + "\n") ||
        !write_file(svg_path, quota::sim::compare_svg(name, res, runs))) {
      std::cerr << "quota-sim compare: cannot write the report or chart\n";
      return exit_usage;
    }
    for (const auto& r : runs) {
      const auto& t = r.totals;
      std::cout << r.set << ": utilisation " << t["utilisation"] << ", peak " << t["peak_usage"] << " of " << r.capacity
                << ", fragmentation " << t["gpu_fragmentation"] << ", wait p50/p90/p99 "
                << t["wait"]["p50"].get<std::string>() << "/" << t["wait"]["p90"].get<std::string>() << "/"
                << t["wait"]["p99"].get<std::string>() << ", preemptions " << t["preemptions"] << ", never admitted "
                << t["never_admitted"] << "\n";
    }
    std::cout << "report: " << report_path << "\nchart:  " << svg_path << "\n";
    return exit_ok;
  } catch (const quota::error& e) {
    return report_invalid(file, e);
  }
}

int cmd_models(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << models_help;
    return exit_ok;
  }
  quota::sim::register_models();
  for (const auto& [name, kind] : quota::sim::model_kinds()) std::cout << name << "\t" << kind.summary << "\n";
  return exit_ok;
}

/// Takes the input-limit options (--max-input-mb, --max-values, --max-jobs, --max-nodes,
/// --lenient-objects) out of args, wherever they are, into default_limits().
/// False on a bad value.
bool take_limit_options(std::vector<std::string>& args) {
  auto& lim = quota::sim::default_limits();
  for (std::size_t i = 0; i < args.size();) {
    const std::string a = args[i];
    if (a == "--lenient-objects") {
      lim.lenient_objects = true;
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    if (a != "--max-input-mb" && a != "--max-values" && a != "--max-jobs" && a != "--max-nodes") {
      ++i;
      continue;
    }
    const std::uint64_t hi = a == "--max-input-mb" ? 1u << 20
                             : a == "--max-values" ? 1'000'000'000
                             : a == "--max-jobs"   ? 100'000'000
                                                   : 10'000'000;
    const auto v = i + 1 < args.size() ? quota::sim::parse_count(args[i + 1], 1, hi) : std::nullopt;
    if (!v) {
      std::cerr << "quota-sim: " << a << " expects an integer from 1 to " << hi << ", got "
                << (i + 1 < args.size() ? "'" + args[i + 1] + "'" : std::string("nothing")) << "\n";
      return false;
    }
    if (a == "--max-input-mb")
      lim.max_file_bytes = *v << 20;
    else if (a == "--max-values")
      lim.max_values = static_cast<std::size_t>(*v);
    else if (a == "--max-jobs")
      lim.max_jobs = static_cast<std::size_t>(*v);
    else
      lim.max_nodes = static_cast<std::size_t>(*v);
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
  }
  return true;
}

int dispatch(std::vector<std::string> args) {
  if (!take_limit_options(args)) return exit_usage;
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << main_help;
    return args.empty() ? exit_usage : exit_ok;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "run") return cmd_run(args);
  if (cmd == "validate") return cmd_validate(args);
  if (cmd == "generate") return quota::sim::cmd_generate(args);
  if (cmd == "models") return cmd_models(args);
  if (cmd == "import") return cmd_import(args);
  if (cmd == "compare") return cmd_compare(args);
  if (cmd == "replay") return cmd_replay(args);
  if (cmd == "explain") return quota::sim::cmd_explain(args);
  std::cerr << "quota-sim: unknown command '" << cmd << "'\n" << main_help;
  return exit_usage;
}

}  // namespace

int main(int argc, char** argv) {
  // Every expected problem is a typed error handled by its command; these are
  // the last line, so that even a missed case ends with a message and exit 2,
  // never an abort.
  try {
    return dispatch(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const quota::error& e) {
    std::cerr << "quota-sim: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "quota-sim: out of memory (see the input limits: quota-sim --help)\n";
  } catch (const std::exception& e) {
    std::cerr << "quota-sim: internal error on this input: " << e.what() << "\n";
  }
  return exit_invalid;
}
