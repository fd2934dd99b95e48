#ifndef BEACONMESH_CNCURSES_SHIM_H
#define BEACONMESH_CNCURSES_SHIM_H
// What `pkg-config --cflags ncursesw` says.
#define _DEFAULT_SOURCE 1
#define _XOPEN_SOURCE 600
#define NCURSES_WIDECHAR 1
#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <stdio.h>
#include <ncursesw/curses.h>

// Swift cannot import function-like or expression macros, nor use C's mutable globals (stdscr, stdout) safely under
// strict concurrency: these wrappers give them plain function signatures. Only BeaconMeshMonitor's Terminal uses them.

/// A curses screen on the process's standard output and input; NULL (instead of exiting, as initscr does) when the
/// terminal type is unknown.
static inline SCREEN *beaconmesh_newterm(void) { return newterm(NULL, stdout, stdin); }

/// The standard screen of the current curses screen.
static inline WINDOW *beaconmesh_stdscr(void) { return stdscr; }

/// The terminal's width and height in cells, as curses last saw it (updated when getch returns KEY_RESIZE).
static inline int beaconmesh_columns(void) { return getmaxx(stdscr); }
static inline int beaconmesh_rows(void) { return getmaxy(stdscr); }

/// Attribute bits: COLOR_PAIR(n) and the A_* constants.
static inline int beaconmesh_color_pair(short pair) { return (int)COLOR_PAIR(pair); }
static inline int beaconmesh_a_normal(void) { return (int)A_NORMAL; }
static inline int beaconmesh_a_bold(void) { return (int)A_BOLD; }
static inline int beaconmesh_a_dim(void) { return (int)A_DIM; }
static inline int beaconmesh_a_reverse(void) { return (int)A_REVERSE; }

/// Sets the attributes of text written from now on (attrset is a macro).
static inline int beaconmesh_attrset(int attributes) { return attrset(attributes); }

#endif
