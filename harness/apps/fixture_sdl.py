#!/usr/bin/python3
"""cua's SDL fixture (pygame, SDL 2): a window drawn pixel by pixel, with no accessibility
tree, like a game or a canvas-drawn app. A counter and two buttons, Increment and Reset,
drawn as text in boxes; every click on one, and every key, is journaled (journal.py), so
tests/no_tree.rs reads the effects from the app itself.

Environment: CUA_FIXTURE_JOURNAL (journal path), CUA_FIXTURE_VARIANT ("moved": the
buttons 60 px lower).
"""
import os
import sys

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import pygame  # noqa: E402

from journal import VARIANT, log  # noqa: E402

SIZE = (360, 240)
BACKGROUND, INK, FACE = (236, 236, 236), (20, 20, 20), (250, 250, 250)


def main():
    pygame.init()
    screen = pygame.display.set_mode(SIZE)
    pygame.display.set_caption("cua fixture sdl")
    # pygame's own font file, the same on every machine.
    font = pygame.font.Font(None, 30)
    top = 110 + (60 if VARIANT == "moved" else 0)
    buttons = {"Increment": pygame.Rect(20, top, 150, 44), "Reset": pygame.Rect(190, top, 150, 44)}
    count, typed = 0, ""
    log("started", variant=VARIANT)
    clock = pygame.time.Clock()
    dirty = True
    while True:
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                log("quit")
                pygame.quit()
                sys.exit(0)
            if event.type == pygame.MOUSEBUTTONUP and event.button == 1:
                for name, rect in buttons.items():
                    if rect.collidepoint(event.pos):
                        count = count + 1 if name == "Increment" else 0
                        log("clicked", widget=name, count=count)
                        dirty = True
            if event.type == pygame.KEYDOWN and event.unicode and event.unicode.isprintable():
                typed += event.unicode
                log("key-press", key=event.unicode, text=typed)
                dirty = True
        if dirty:
            screen.fill(BACKGROUND)
            screen.blit(font.render(f"Count: {count}", True, INK), (20, 30))
            screen.blit(font.render(f"Typed: {typed}", True, INK), (20, 66))
            for name, rect in buttons.items():
                pygame.draw.rect(screen, FACE, rect)
                pygame.draw.rect(screen, INK, rect, 1)
                label = font.render(name, True, INK)
                screen.blit(label, label.get_rect(center=rect.center))
            pygame.display.flip()
            dirty = False
        clock.tick(30)


if __name__ == "__main__":
    main()
