// The KIM API's collection-item record (shared-library schema version 2) of one surge KIM item: the
// model driver SURGE_DP__MD, or a parameterized model that embeds one surge Deep Potential .h5 as
// its parameter file. Compiled once per item with -D: SG_KIM_ITEM (name), SG_KIM_DRIVER (1: the
// driver; 0: a parameterized model), SG_KIM_PARAM (path of the .h5) and SG_KIM_PARAM_BASE (the name
// KIM gives the file when it writes it out for the driver). The record's layout follows the KIM API
// 2.3 loader (two symbols: the schema version and the record); it is C++ because the item type and
// language constants are C++ objects of libkim-api.
#include <cstddef>
#include "KIM_CollectionItemType.hpp"
#include "KIM_FunctionTypes.hpp"
#include "KIM_LanguageName.hpp"

#define SG_STR2(x) #x
#define SG_STR(x) SG_STR2(x)

namespace
{
struct Embedded {
  char const          *name;
  unsigned int const   length;
  unsigned char const *bytes;
};
struct SchemaV2 {
  KIM::CollectionItemType const itemType;
  char const *const             itemName;
  KIM::LanguageName const       createLanguage;
  KIM::Function                *createRoutine;
  char const *const             driverName;
  Embedded const *const         smspec;
  int const                     nparam;
  Embedded const *const         params;
  int const                     nmeta;
  Embedded const *const         meta;
};
} // namespace

extern "C" {
int kim_shared_library_schema_version = 2;

#if SG_KIM_DRIVER
int SurgeDP_DriverCreate(void);
SchemaV2 kim_shared_library_schema = {KIM::COLLECTION_ITEM_TYPE::modelDriver, SG_STR(SG_KIM_ITEM), KIM::LANGUAGE_NAME::c, reinterpret_cast<KIM::Function *>(SurgeDP_DriverCreate), NULL, NULL, 0, NULL, 0, NULL};
#else
// the model file's bytes, placed in the library by the assembler (no copy through a generated source)
extern unsigned char const sg_kim_param_begin[];
extern unsigned char const sg_kim_param_end[];
__asm__(".section .rodata\n.balign 16\n.globl sg_kim_param_begin\n.hidden sg_kim_param_begin\nsg_kim_param_begin:\n.incbin \"" SG_STR(SG_KIM_PARAM) "\"\n"
        ".globl sg_kim_param_end\n.hidden sg_kim_param_end\nsg_kim_param_end:\n.byte 0\n.previous\n");
static Embedded const sg_kim_params[] = {{SG_STR(SG_KIM_PARAM_BASE), static_cast<unsigned int>(sg_kim_param_end - sg_kim_param_begin), sg_kim_param_begin}};
SchemaV2 kim_shared_library_schema = {KIM::COLLECTION_ITEM_TYPE::portableModel, SG_STR(SG_KIM_ITEM), KIM::LANGUAGE_NAME::c, NULL, "SURGE_DP__MD", NULL, 1, sg_kim_params, 0, NULL};
#endif
}
