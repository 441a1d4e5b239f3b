//===- Choice.h - closed choices of options ---------------------*- C++ -*-===//
//
// An option whose value is one of a fixed set of names (an optimizer, a
// precision, a checkpointing strategy) is an enum with one table of
// Choice entries: the names, their help and their values live there once.
// `ChoiceParser` is the llvm::cl parser of such an enum: every option of
// that type (a tool's cl::opt, a pass's ODS Option, a pipeline option)
// lists the table's names in `--help`, and a value outside it is refused
// by the option parser, which names the valid ones. `choices(...)`
// restricts one option to some of the table's values.
//
// Declaring an enum as a choice:
//
//   enum class Optimizer { SGD, Adam };
//   inline llvm::ArrayRef<Choice<Optimizer>> getChoices(Optimizer) {
//     static constexpr Choice<Optimizer> table[] = {
//         {Optimizer::SGD, "sgd", "Stochastic gradient descent"},
//         {Optimizer::Adam, "adam", "Adam"}};
//     return table;
//   }
//   MEMOPT_CHOICE_PARSER(Optimizer)   // at global scope
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_SUPPORT_CHOICE_H
#define MEMOPT_SUPPORT_CHOICE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <initializer_list>
#include <string>

namespace memopt {

/// One name of a closed choice.
template <typename E> struct Choice {
  E value;
  llvm::StringLiteral name;
  llvm::StringLiteral help;
};

/// The name of `value` in its enum's table (found by argument-dependent
/// lookup of `getChoices(E)`).
template <typename E> llvm::StringRef stringifyChoice(E value) {
  for (const Choice<E> &choice : getChoices(E()))
    if (choice.value == value)
      return choice.name;
  return "?";
}

/// "a, b or c".
inline std::string joinChoiceNames(llvm::ArrayRef<llvm::StringRef> names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i)
      text += i + 1 == names.size() ? " or " : ", ";
    text += names[i].str();
  }
  return text;
}

/// A modifier that gives one option only these values of its table, in
/// the table's order: `cl::opt<Precision> p("p", choices(Precision::FP16,
/// Precision::BF16))`, or in ODS the option's additional flags.
template <typename E> struct ChoiceSubset {
  llvm::SmallVector<E, 4> values;

  template <typename Opt> void apply(Opt &option) const {
    for (const Choice<E> &choice : getChoices(E()))
      if (llvm::is_contained(values, choice.value))
        option.getParser().addLiteralOption(choice.name, choice.value,
                                            choice.help);
  }
};

template <typename E, typename... Es>
ChoiceSubset<E> choices(E first, Es... rest) {
  return ChoiceSubset<E>{{first, rest...}};
}

/// llvm::cl's parser for an enum with a choice table: the generic
/// cl::parser's interface (so MLIR's pass options can print the value
/// back), filled from the table unless the option names a subset, and a
/// refusal that lists the valid names.
template <typename E>
class ChoiceParser : public llvm::cl::generic_parser_base {
protected:
  class OptionInfo : public GenericOptionInfo {
  public:
    OptionInfo(llvm::StringRef name, E value, llvm::StringRef help)
        : GenericOptionInfo(name, help), V(value) {}
    llvm::cl::OptionValue<E> V;
  };
  llvm::SmallVector<OptionInfo, 8> Values;

public:
  using parser_data_type = E;

  ChoiceParser(llvm::cl::Option &owner) : generic_parser_base(owner) {}

  void initialize() {
    generic_parser_base::initialize();
    if (Values.empty())
      for (const Choice<E> &choice : getChoices(E()))
        addLiteralOption(choice.name, choice.value, choice.help);
  }

  unsigned getNumOptions() const override { return Values.size(); }
  llvm::StringRef getOption(unsigned n) const override {
    return Values[n].Name;
  }
  llvm::StringRef getDescription(unsigned n) const override {
    return Values[n].HelpStr;
  }
  const llvm::cl::GenericOptionValue &
  getOptionValue(unsigned n) const override {
    return Values[n].V;
  }

  /// True on error, as llvm::cl's parsers.
  bool parse(llvm::cl::Option &option, llvm::StringRef, llvm::StringRef arg,
             E &value) {
    llvm::SmallVector<llvm::StringRef> names;
    for (const OptionInfo &info : Values) {
      if (info.Name == arg) {
        value = info.V.getValue();
        return false;
      }
      names.push_back(info.Name);
    }
    return option.error("unknown value '" + arg + "' (expected " +
                        joinChoiceNames(names) + ")");
  }

  template <typename DT>
  void addLiteralOption(llvm::StringRef name, const DT &value,
                        llvm::StringRef help) {
    Values.push_back(OptionInfo(name, static_cast<E>(value), help));
    AddLiteralOption(Owner, name);
  }

  void removeLiteralOption(llvm::StringRef name) {
    unsigned n = findOption(name);
    if (n != Values.size())
      Values.erase(Values.begin() + n);
  }
};

} // namespace memopt

/// Makes ChoiceParser the llvm::cl parser of `ENUM` (a fully qualified
/// enum with a getChoices table); at global scope.
#define MEMOPT_CHOICE_PARSER(ENUM)                                             \
  template <>                                                                  \
  class llvm::cl::parser<ENUM> : public ::memopt::ChoiceParser<ENUM> {         \
  public:                                                                      \
    using ::memopt::ChoiceParser<ENUM>::ChoiceParser;                          \
  };

#endif // MEMOPT_SUPPORT_CHOICE_H
