#include "fs_where.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* The child of node for one path segment (seg, len), or NULL. */
static yaml_node_t *child(yaml_document_t *doc, yaml_node_t *node, const char *seg, size_t len)
{
    if (node->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
             p < node->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);
            if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == len &&
                memcmp(k->data.scalar.value, seg, len) == 0)
                return yaml_document_get_node(doc, p->value);
        }
        return NULL;
    }
    if (node->type == YAML_SEQUENCE_NODE) {
        char num[24];
        if (len == 0 || len >= sizeof num)
            return NULL;
        memcpy(num, seg, len);
        num[len] = '\0';
        char *end;
        unsigned long i = strtoul(num, &end, 10);
        yaml_node_item_t *items = node->data.sequence.items.start;
        size_t n = (size_t)(node->data.sequence.items.top - items);
        if (*end || i >= n)
            return NULL;
        return yaml_document_get_node(doc, items[i]);
    }
    return NULL;
}

int fs_where_key(const char *text, const char *path, char *buf, size_t n)
{
    snprintf(buf, n, "1:1");
    if (!text || !path)
        return 0;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return 0;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
    int found = 0;
    if (yaml_parser_load(&parser, &doc)) {
        yaml_node_t *node = yaml_document_get_root_node(&doc);
        const char *seg = path;
        while (node) {
            const char *dot = strchr(seg, '.');
            size_t len = dot ? (size_t)(dot - seg) : strlen(seg);
            yaml_node_t *next = child(&doc, node, seg, len);
            if (!next)
                break;
            node = next;
            snprintf(buf, n, "%zu:%zu", node->start_mark.line + 1, node->start_mark.column + 1);
            if (!dot) {
                found = 1;
                break;
            }
            seg = dot + 1;
        }
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    return found;
}
