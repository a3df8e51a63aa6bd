// Strategy factory: one registration line per strategy.
#include "tessel/tuner/search_strategy.h"

#include "strategy_base.h"

namespace tessel::tuner {

namespace detail {
using Factory = std::unique_ptr<SearchStrategy> (*)(const SearchSpace&, costmodel::CostModel*, const StrategyParams&,
                                                    const std::set<std::string>&);
std::unique_ptr<SearchStrategy> make_random_search(const SearchSpace&, costmodel::CostModel*, const StrategyParams&,
                                                   const std::set<std::string>&);
std::unique_ptr<SearchStrategy> make_grid_search(const SearchSpace&, costmodel::CostModel*, const StrategyParams&,
                                                 const std::set<std::string>&);
std::unique_ptr<SearchStrategy> make_evolutionary_search(const SearchSpace&, costmodel::CostModel*,
                                                         const StrategyParams&, const std::set<std::string>&);
std::unique_ptr<SearchStrategy> make_annealing_search(const SearchSpace&, costmodel::CostModel*,
                                                      const StrategyParams&, const std::set<std::string>&);
const std::vector<std::pair<std::string, Factory>>& strategies() {
  static const std::vector<std::pair<std::string, Factory>> s = {{"evolutionary", make_evolutionary_search},
                                                                 {"random", make_random_search},
                                                                 {"grid", make_grid_search},
                                                                 {"annealing", make_annealing_search}};
  return s;
}
}  // namespace detail

std::vector<std::string> search_strategy_names() {
  std::vector<std::string> n;
  for (auto& [name, f] : detail::strategies()) n.push_back(name);
  return n;
}

std::unique_ptr<SearchStrategy> make_search_strategy(const std::string& name, const SearchSpace& space,
                                                     costmodel::CostModel* model, const StrategyParams& params,
                                                     const std::set<std::string>& seen) {
  for (auto& [n, f] : detail::strategies())
    if (n == name) return f(space, model, params, seen);
  std::string names;
  for (auto& n : search_strategy_names()) names += (names.empty() ? "" : ", ") + n;
  TESSEL_CHECK(false) << "unknown search strategy '" << name << "' (strategies: " << names << ")";
  return nullptr;
}

}  // namespace tessel::tuner
