# A sample for `cordon run`: tries what untrusted code should not be able to do, and says
# what happened to each attempt. In a sandbox every line ends in "stopped"; run it through
# `-b subprocess` (which isolates nothing) and the lines say "REACHED".
#
# Nothing here sends a packet: the network attempt is a UDP connect(), which only asks the
# kernel for a route (to 192.0.2.1, an address reserved for documentation).
import os
import socket


def attempt(what, action):
    try:
        seen = action()
    except OSError as error:
        print(f"{what}: stopped ({error.strerror or error})")
        return
    if seen:
        print(f"{what}: REACHED ({seen})")
    else:
        print(f"{what}: stopped (nothing there)")


def route_out():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.connect(("192.0.2.1", 53))
        return "a route out via " + udp.getsockname()[0]


def host_accounts():
    with open("/etc/shadow", encoding="utf-8", errors="replace") as shadow:
        return f"/etc/shadow, {len(shadow.readlines())} accounts"


def host_homes():
    homes = [entry for base in ("/root", "/home") if os.path.isdir(base)
             for entry in os.listdir(base)]
    return f"{len(homes)} entries in /root and /home" if homes else ""


def host_processes():
    others = [pid for pid in os.listdir("/proc") if pid.isdigit() and int(pid) > 2]
    return f"{len(others)} other processes" if len(others) > 2 else ""


def write_system():
    with open("/usr/cordon-escape-test", "w", encoding="utf-8"):
        pass
    os.unlink("/usr/cordon-escape-test")
    return "wrote into /usr"


attempt("network", route_out)
attempt("host password file", host_accounts)
attempt("home directories", host_homes)
attempt("host processes", host_processes)
attempt("write outside /tmp", write_system)
