//===- SpyreExtension.cpp - Python classes of Spyre types and attrs -------===//

#include "spyre-mlir-c/Dialects.h"
#include "spyre-mlir/Nesting.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include "mlir-c/BuiltinAttributes.h"
#include "nanobind/stl/pair.h"
#include "nanobind/stl/string.h"
#include "nanobind/stl/vector.h"

#include <optional>
#include <vector>

namespace nb = nanobind;
using namespace mlir::python::nanobind_adaptors;

/// Raises a Python error carrying MLIR's diagnostic when `get` failed.
template <typename T>
static T checked(T value, bool isNull, const char *what) {
  if (isNull)
    throw nb::value_error(
        (std::string("invalid ") + what +
         " (see the diagnostic printed above or attached to the context)")
            .c_str());
  return value;
}

NB_MODULE(_spyre, m) {
  m.doc() = "Spyre dialect types and attributes, and the binary writer.";

  m.def(
      "translate_to_binary",
      [](MlirOperation op, const std::string &archPath) {
        struct Result {
          std::string bytes, error;
        } result;
        MlirLogicalResult status = spyreTranslateToBinary(
            op, mlirStringRefCreate(archPath.data(), archPath.size()),
            [](MlirStringRef s, void *r) {
              static_cast<Result *>(r)->bytes.assign(s.data, s.length);
            },
            [](MlirStringRef s, void *r) {
              static_cast<Result *>(r)->error.assign(s.data, s.length);
            },
            &result);
        if (mlirLogicalResultIsFailure(status))
          throw nb::value_error(("cannot write the program binary:\n" + result.error).c_str());
        return nb::bytes(result.bytes.data(), result.bytes.size());
      },
      nb::arg("op"), nb::arg("arch_path") = "",
      "The program binary of the one spyre.hw.program under `op` (a module or the program).");

  m.def(
      "compile_stages",
      [] {
        std::vector<std::pair<std::string, std::string>> stages;
        for (intptr_t i = 0, e = spyreCompileStageCount(); i < e; ++i) {
          MlirStringRef name = spyreCompileStageName(i), result = spyreCompileStageResult(i);
          stages.emplace_back(std::string(name.data, name.length),
                              std::string(result.data, result.length));
        }
        return stages;
      },
      "The stages of spyre-compile in order, as (name, what the IR has after it).");

  m.attr("MAX_NESTING_DEPTH") = mlir::spyre::kMaxNestingDepth;
  m.def(
      "check_nesting",
      [](std::string_view text) {
        std::string tooDeep = mlir::spyre::checkNesting(text);
        if (!tooDeep.empty())
          throw nb::value_error(tooDeep.c_str());
      },
      nb::arg("text"),
      "Raises ValueError if IR text nests deeper than MAX_NESTING_DEPTH, which "
      "would overflow the stack of MLIR's recursive parser (spyre-mlir/Nesting.h).");

  mlir_attribute_subclass(m, "LayoutAttr", spyreAttributeIsALayout,
                          spyreLayoutAttrGetTypeID)
      .def_classmethod(
          "get",
          [](nb::object cls, std::vector<int64_t> order, int64_t stick,
             MlirLocation loc) {
            MlirAttribute attr = spyreLayoutAttrGetChecked(
                loc, order.size(), order.data(), stick);
            return cls(checked(attr, mlirAttributeIsNull(attr), "layout"));
          },
          nb::arg("cls"), nb::arg("order"), nb::arg("stick") = 0,
          nb::arg("loc").none() = nb::none(),
          "A layout storing dimensions in `order`, in sticks of `stick` "
          "elements when `stick` > 0.")
      .def_property_readonly("order",
                             [](MlirAttribute self) {
                               std::vector<int64_t> order;
                               for (intptr_t i = 0,
                                             e = spyreLayoutAttrGetRank(self);
                                    i < e; ++i)
                                 order.push_back(spyreLayoutAttrGetOrder(self, i));
                               return order;
                             })
      .def_property_readonly("stick", [](MlirAttribute self) {
        return spyreLayoutAttrGetStick(self);
      });

  // Subclassing ShapedType gives buffers .shape, .rank, .element_type, ...
  nb::object shapedType = nb::module_::import_(MAKE_MLIR_PYTHON_QUALNAME("ir"))
                              .attr("ShapedType");
  mlir_type_subclass(m, "BufferType", spyreTypeIsABuffer, shapedType,
                     spyreBufferTypeGetTypeID)
      .def_classmethod(
          "get",
          [](nb::object cls, std::vector<int64_t> shape, MlirType elementType,
             std::optional<MlirAttribute> layout, const std::string &memorySpace,
             MlirLocation loc) {
            int space;
            if (memorySpace == "dram")
              space = SpyreMemorySpaceDram;
            else if (memorySpace == "lx")
              space = SpyreMemorySpaceLx;
            else
              throw nb::value_error(
                  ("unknown memory space '" + memorySpace +
                   "' (expected 'dram' or 'lx')")
                      .c_str());
            MlirType type = spyreBufferTypeGetChecked(
                loc, shape.size(), shape.data(), elementType,
                layout ? *layout : MlirAttribute{nullptr}, space);
            return cls(checked(type, mlirTypeIsNull(type), "buffer type"));
          },
          nb::arg("cls"), nb::arg("shape"), nb::arg("element_type"),
          nb::arg("layout").none() = nb::none(),
          nb::arg("memory_space") = "dram",
          nb::arg("loc").none() = nb::none(),
          "A buffer type; use ShapedType.get_dynamic_size() for `?` dims.")
      .def_property_readonly("layout",
                             [](MlirType self) -> std::optional<MlirAttribute> {
                               MlirAttribute a = spyreBufferTypeGetLayout(self);
                               if (mlirAttributeIsNull(a))
                                 return std::nullopt;
                               return a;
                             })
      .def_property_readonly("memory_space", [](MlirType self) {
        return spyreBufferTypeGetMemorySpace(self) == SpyreMemorySpaceLx
                   ? "lx"
                   : "dram";
      });
}
