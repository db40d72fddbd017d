/* Linked into the Vulkan tests of sanitizer builds only (cmake/poot.cmake,
 * poot_vulkan_leak_check): a dlclose that keeps every library mapped until
 * the process exits.
 *
 * LeakSanitizer names a leak's frames when the process exits. The Vulkan
 * loader opens every installed driver to enumerate devices and closes those
 * without one (and the one it used, at vkDestroyInstance), so a driver's
 * allocation is reported from "<unknown module>", or from whatever library
 * later reused its address range, and no suppression scoped to the driver
 * can match it. With the driver still mapped its frames are named and
 * lsan_vulkan.supp's module patterns apply; poot's own frames are named
 * either way. See docs/decisions/0002-lsan-vulkan-drivers.md.
 *
 * The executable's definition interposes the C library's for every library
 * the process loads (the dynamic linker searches the executable first). */
int dlclose(void *handle);

int dlclose(void *handle) {
  (void)handle;
  return 0;
}
