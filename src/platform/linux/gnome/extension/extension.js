// cua's bridge inside GNOME Shell: what mutter tells no outside caller (the window list
// with pids, a window's pixels) and the seat's input, served on the session bus as
// org.cua.Shell at /org/cua/Shell. cua's GNOME display server (gnome.rs) is its only
// client; every method answers at once or fails with a message naming what went wrong.
'use strict';

const { Clutter, Gio, GLib, Meta, Shell } = imports.gi;
const Main = imports.ui.main;

const BUS_NAME = 'org.cua.Shell';
const OBJECT_PATH = '/org/cua/Shell';
const IFACE = `
<node>
  <interface name="org.cua.Shell">
    <method name="Windows">
      <arg type="s" direction="out" name="json"/>
    </method>
    <method name="Capture">
      <arg type="i" direction="in" name="x"/>
      <arg type="i" direction="in" name="y"/>
      <arg type="i" direction="in" name="width"/>
      <arg type="i" direction="in" name="height"/>
      <arg type="ay" direction="out" name="png"/>
    </method>
    <method name="Input">
      <arg type="s" direction="in" name="events"/>
    </method>
    <method name="Activate">
      <arg type="t" direction="in" name="id"/>
    </method>
    <method name="Place">
      <arg type="t" direction="in" name="id"/>
      <arg type="b" direction="in" name="move"/>
      <arg type="i" direction="in" name="x"/>
      <arg type="i" direction="in" name="y"/>
      <arg type="i" direction="in" name="width"/>
      <arg type="i" direction="in" name="height"/>
    </method>
  </interface>
</node>`;

// Buttons go by the numbers X gives them, which Clutter's are (1 left, 2 middle, 3
// right, 8 back, 9 forward; mutter turns them into evdev codes); 4 to 7 are the wheel.
const BUTTONS = [1, 2, 3, 8, 9];
const WHEEL = {
    4: Clutter.ScrollDirection.UP,
    5: Clutter.ScrollDirection.DOWN,
    6: Clutter.ScrollDirection.LEFT,
    7: Clutter.ScrollDirection.RIGHT,
};

function windowById(id) {
    const found = global.get_window_actors()
        .map(a => a.meta_window)
        .find(w => w.get_id() === id);
    if (!found)
        throw new Error(`no window ${id}`);
    return found;
}

function rect(r) {
    return { x: r.x, y: r.y, width: r.width, height: r.height };
}

class Bridge {
    constructor() {
        const seat = Clutter.get_default_backend().get_default_seat();
        this._pointer = seat.create_virtual_device(Clutter.InputDeviceType.POINTER_DEVICE);
        this._keyboard = seat.create_virtual_device(Clutter.InputDeviceType.KEYBOARD_DEVICE);
    }

    // The screen's size, the pointer, and the windows bottom to top, as the stacking
    // order has them.
    Windows() {
        const focus = global.display.get_focus_window();
        const windows = global.get_window_actors().map(a => a.meta_window);
        const [px, py] = global.get_pointer();
        return JSON.stringify({
            screen: global.display.get_size(),
            pointer: [px, py],
            windows: windows.map(w => ({
                id: w.get_id(),
                pid: w.get_pid(),
                title: w.get_title() || '',
                app_id: w.get_wm_class() || '',
                kind: Object.keys(Meta.WindowType).find(k => Meta.WindowType[k] === w.get_window_type()) || 'NORMAL',
                parent: w.get_transient_for() ? w.get_transient_for().get_id() : null,
                frame: rect(w.get_frame_rect()),
                buffer: rect(w.get_buffer_rect()),
                focused: w === focus,
                minimized: w.minimized,
                hidden: w.is_hidden(),
            })),
        });
    }

    async CaptureAsync([x, y, width, height], invocation) {
        try {
            const stream = Gio.MemoryOutputStream.new_resizable();
            const shooter = new Shell.Screenshot();
            await new Promise((resolve, reject) => {
                shooter.screenshot_area(x, y, width, height, stream, (s, result) => {
                    try {
                        s.screenshot_area_finish(result);
                        resolve();
                    } catch (e) {
                        reject(e);
                    }
                });
            });
            stream.close(null);
            const bytes = stream.steal_as_bytes();
            invocation.return_value(new GLib.Variant('(ay)', [bytes.toArray()]));
        } catch (e) {
            invocation.return_error_literal(Gio.IOErrorEnum, Gio.IOErrorEnum.FAILED, `capture: ${e.message}`);
        }
    }

    // Events in screen pixels: {move: [x, y]}, {button: n, down: bool},
    // {keysym: k, down: bool}.
    Input(json) {
        for (const e of JSON.parse(json)) {
            const now = GLib.get_monotonic_time();
            if (e.move) {
                this._pointer.notify_absolute_motion(now, e.move[0], e.move[1]);
            } else if (e.button !== undefined && WHEEL[e.button] !== undefined) {
                if (e.down)
                    this._pointer.notify_discrete_scroll(now, WHEEL[e.button], Clutter.ScrollSource.WHEEL);
            } else if (e.button !== undefined) {
                if (!BUTTONS.includes(e.button))
                    throw new Error(`no button ${e.button}`);
                this._pointer.notify_button(now, e.button,
                    e.down ? Clutter.ButtonState.PRESSED : Clutter.ButtonState.RELEASED);
            } else if (e.keysym !== undefined) {
                this._keyboard.notify_keyval(now, e.keysym,
                    e.down ? Clutter.KeyState.PRESSED : Clutter.KeyState.RELEASED);
            } else {
                throw new Error(`not an input event: ${JSON.stringify(e)}`);
            }
        }
    }

    // Answers once the window is active and the overview (where a person's session
    // starts, and where events would go) has finished hiding.
    ActivateAsync([id], invocation) {
        try {
            const window = windowById(id);
            const answer = () => invocation.return_value(null);
            if (!Main.overview.visible) {
                Main.activateWindow(window);
                answer();
                return;
            }
            const hidden = Main.overview.connect('hidden', () => {
                Main.overview.disconnect(hidden);
                answer();
            });
            Main.activateWindow(window);
        } catch (e) {
            invocation.return_error_literal(Gio.IOErrorEnum, Gio.IOErrorEnum.FAILED, `Activate: ${e.message}`);
        }
    }

    Place(id, move, x, y, width, height) {
        const w = windowById(id);
        if (w.maximized_horizontally || w.maximized_vertically)
            w.unmaximize(Meta.MaximizeFlags.BOTH);
        const at = w.get_frame_rect();
        w.move_resize_frame(true, move ? x : at.x, move ? y : at.y, width, height);
    }
}

// Outside cua's sandbox (a person's own session) the bridge answers only the executables
// listed in the file beside it (`cua permissions grant gnome` writes its own path there):
// any other caller, on a bus every program of the session reaches, is refused, as GNOME
// refuses outside callers its own window list and screenshots.
const ALLOWED_CALLERS = 'allowed-callers';

class Guarded {
    constructor(bridge, allowed) {
        this._bridge = bridge;
        this._allowed = allowed;
        // Unique bus names are never reused on a bus: a caller's answer holds.
        this._known = new Map();
        for (const [name, signature] of [['Windows', '(s)'], ['Input', null], ['Place', null]]) {
            this[`${name}Async`] = (params, invocation) => {
                if (!this._let(invocation))
                    return;
                try {
                    const result = this._bridge[name](...params);
                    invocation.return_value(signature ? new GLib.Variant(signature, [result]) : null);
                } catch (e) {
                    invocation.return_error_literal(Gio.IOErrorEnum, Gio.IOErrorEnum.FAILED, `${name}: ${e.message}`);
                }
            };
        }
    }

    CaptureAsync(params, invocation) {
        if (this._let(invocation))
            this._bridge.CaptureAsync(params, invocation);
    }

    ActivateAsync(params, invocation) {
        if (this._let(invocation))
            this._bridge.ActivateAsync(params, invocation);
    }

    // Whether the caller's executable is listed; a refusal is the call's answer.
    _let(invocation) {
        const sender = invocation.get_sender();
        if (!this._known.has(sender))
            this._known.set(sender, this._executableOf(invocation, sender));
        const exe = this._known.get(sender);
        if (exe !== null && this._allowed.includes(exe))
            return true;
        invocation.return_error_literal(Gio.DBusError, Gio.DBusError.ACCESS_DENIED,
            `cua's Shell extension answers only ${this._allowed.join(', ') || 'the cua that enabled it (none listed)'}, not ${exe || 'an unknown program'}: run \`cua permissions grant gnome\` with that cua`);
        return false;
    }

    _executableOf(invocation, sender) {
        try {
            const reply = invocation.get_connection().call_sync('org.freedesktop.DBus',
                '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'GetConnectionUnixProcessID',
                new GLib.Variant('(s)', [sender]), new GLib.VariantType('(u)'),
                Gio.DBusCallFlags.NONE, 1000, null);
            const [pid] = reply.deep_unpack();
            return GLib.file_read_link(`/proc/${pid}/exe`);
        } catch (e) {
            return null;
        }
    }
}

// The executables listed beside the extension, one path a line.
function allowedCallers() {
    const me = imports.misc.extensionUtils.getCurrentExtension();
    try {
        const [, bytes] = GLib.file_get_contents(me.dir.get_child(ALLOWED_CALLERS).get_path());
        return new TextDecoder().decode(bytes).split('\n').map(l => l.trim()).filter(l => l);
    } catch (e) {
        return [];
    }
}

// The window types a sandbox gives the focus to when they first show.
const TAKES_FOCUS = [Meta.WindowType.NORMAL, Meta.WindowType.DIALOG, Meta.WindowType.MODAL_DIALOG];

class Extension {
    enable() {
        this._bridge = new Bridge();
        const sandbox = GLib.getenv('CUA_GNOME_SANDBOX');
        const served = sandbox ? this._bridge : new Guarded(this._bridge, allowedCallers());
        this._exported = Gio.DBusExportedObject.wrapJSObject(IFACE, served);
        this._exported.export(Gio.DBus.session, OBJECT_PATH);
        this._signals = [];
        if (!sandbox) {
            this._own();
            return;
        }
        // cua's sandbox: a new window takes the focus when it shows, as under openbox and
        // sway. mutter's focus-stealing prevention otherwise leaves a window that maps on
        // a busy machine unfocused (GTK's first button then unfocused, its title bar
        // grey: 1 scenario run in 10 while other tests ran).
        this._connect(global.display, 'window-created', (display, window) => {
            if (!TAKES_FOCUS.includes(window.get_window_type()))
                return;
            const shown = window.connect('shown', () => {
                window.disconnect(shown);
                if (!window.has_focus())
                    Main.activateWindow(window);
            });
        });
        // A headless shell starts in the overview; the sandbox shows the desktop, as a
        // person sees it after closing the overview. The bus name is claimed once the
        // desktop shows, so the sandbox's start (which waits for it) ends there and no
        // app's window maps into the overview.
        const ready = () => {
            if (!Main.overview.visible) {
                this._own();
                return;
            }
            const hidden = Main.overview.connect('hidden', () => {
                Main.overview.disconnect(hidden);
                this._own();
            });
            Main.overview.hide();
        };
        if (Main.layoutManager._startingUp)
            this._connect(Main.layoutManager, 'startup-complete', ready);
        else
            ready();
    }

    _own() {
        this._owner = Gio.bus_own_name_on_connection(Gio.DBus.session, BUS_NAME,
            Gio.BusNameOwnerFlags.NONE, null, null);
    }

    _connect(object, signal, handler) {
        this._signals.push([object, object.connect(signal, handler)]);
    }

    disable() {
        for (const [object, id] of this._signals)
            object.disconnect(id);
        this._signals = [];
        if (this._owner)
            Gio.bus_unown_name(this._owner);
        this._owner = null;
        this._exported.unexport();
        this._exported = null;
        this._bridge = null;
    }
}

function init() {
    return new Extension();
}
